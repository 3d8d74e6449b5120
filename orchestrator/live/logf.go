package live

import (
	"fmt"
	"io"
	"time"
)

func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, time.Now().Format("2006-01-02T15:04:05.000")+" "+format+"\n", args...)
}
