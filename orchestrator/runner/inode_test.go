package runner

import (
	"os"
	"syscall"
)

func inode(fi os.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Ino }
