// Package capture records the headers of every packet crossing a host port
// into one pcap file per port (pcap/<host>-<iface>.pcap), with gopacket's
// pure-Go AF_PACKET ring (TPACKET_V3) and pcap writer: no libpcap.
//
// The packet socket is created inside the host's namespace (nsexec) and
// read from an ordinary goroutine. A socket filter truncates packets to the
// snap length in the kernel, so only headers cross into user space. The
// kernel's drop counter is reported per port: a capture with drops is
// incomplete and run.json says so. Where a link's delay is served at the
// port (link placement) the filter keeps only the packet's delayed
// arrival (filter.go).
package capture

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"cclab/internal/nsexec"

	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"cclab/rundir"
)

// A Port is one interface to capture.
type Port struct {
	Host  string `json:"host"`
	Netns string `json:"-"`
	Iface string `json:"iface"`
	// Redelivered is set on a port that receives packets twice, before
	// and after its link's delay (link placement).
	Redelivered *Redelivery `json:"-"`
}

// FileName is the port's pcap file, relative to the run directory.
func (p Port) FileName() string { return rundir.CaptureFile(p.Host, p.Iface) }

// Stats is what one port's capture saw.
type Stats struct {
	Port    Port   `json:"port"`
	File    string `json:"file"`
	Packets uint64 `json:"packets"` // written to the file
	Drops   uint64 `json:"drops"`   // dropped by the kernel: the ring was full
	Freezes uint64 `json:"queue_freezes"`
}

// Ring sizing: the kernel retires a block when it is full or blockTimeout
// after its first packet, and drops when every block awaits the reader.
// 64 blocks of 256 KiB (16 MiB per port, ~110k truncated packets) ride
// out a reader that a CPU-saturated run starves for a second or more.
const (
	blockSize    = 256 << 10
	numBlocks    = 64
	blockTimeout = 20 * time.Millisecond
	pollTimeout  = 50 * time.Millisecond
)

// A Session is a running capture of several ports.
type Session struct {
	ports []*portCapture
	stop  chan struct{}
	wg    sync.WaitGroup
}

type portCapture struct {
	port    Port
	path    string
	snaplen int
	tp      *afpacket.TPacket
	f       *os.File
	w       *bufio.Writer
	pw      *pcapgo.Writer
	packets uint64
	err     error
}

// Start opens a capture on every port, writing under dir. Either all ports
// are captured or none (and nothing is left open).
func Start(dir string, ports []Port, snaplen int) (*Session, error) {
	if err := os.MkdirAll(filepath.Join(dir, rundir.PcapDir), 0o755); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	s := &Session{stop: make(chan struct{})}
	for _, p := range ports {
		pc, err := open(dir, p, snaplen)
		if err != nil {
			for _, o := range s.ports {
				o.close()
			}
			return nil, err
		}
		s.ports = append(s.ports, pc)
	}
	for _, pc := range s.ports {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			pc.loop(s.stop)
		}()
	}
	return s, nil
}

func open(dir string, p Port, snaplen int) (*portCapture, error) {
	pc := &portCapture{port: p, path: filepath.Join(dir, p.FileName()), snaplen: snaplen}
	err := nsexec.Do(p.Netns, func() error {
		tp, err := afpacket.NewTPacket(afpacket.OptInterface(p.Iface), afpacket.TPacketVersion3,
			afpacket.OptFrameSize(4096), afpacket.OptBlockSize(blockSize), afpacket.OptNumBlocks(numBlocks),
			afpacket.OptBlockTimeout(blockTimeout), afpacket.OptPollTimeout(pollTimeout))
		if err != nil {
			return err
		}
		pc.tp = tp
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("capture %s %s: %w", p.Host, p.Iface, err)
	}
	// The kernel keeps only the headers, of each arrival once.
	prog, err := filterProgram(snaplen, p.Redelivered)
	if err == nil {
		err = pc.tp.SetBPF(prog)
	}
	if err == nil {
		// Packets seen before the filter was attached are not ours to keep.
		_, _, err = pc.tp.SocketStats()
	}
	if err != nil {
		pc.tp.Close()
		return nil, fmt.Errorf("capture %s %s: filter: %w", p.Host, p.Iface, err)
	}
	f, err := os.Create(pc.path)
	if err != nil {
		pc.tp.Close()
		return nil, fmt.Errorf("capture: %w", err)
	}
	pc.f, pc.w = f, bufio.NewWriterSize(f, 1<<20)
	pc.pw = pcapgo.NewWriterNanos(pc.w)
	if err := pc.pw.WriteFileHeader(uint32(snaplen), layers.LinkTypeEthernet); err != nil {
		pc.close()
		return nil, fmt.Errorf("capture %s: %w", pc.path, err)
	}
	return pc, nil
}

func (pc *portCapture) loop(stop <-chan struct{}) {
	stopping := false
	for {
		data, ci, err := pc.tp.ZeroCopyReadPacketData()
		if err != nil {
			if errors.Is(err, afpacket.ErrTimeout) {
				// Idle for a poll period: after a stop, the ring is drained.
				if stopping {
					return
				}
				select {
				case <-stop:
					stopping = true
				default:
				}
				continue
			}
			pc.err = fmt.Errorf("capture %s %s: read: %w", pc.port.Host, pc.port.Iface, err)
			return
		}
		if len(data) > pc.snaplen {
			data = data[:pc.snaplen]
		}
		ci.CaptureLength = len(data)
		ci.InterfaceIndex = 0
		ci.AncillaryData = nil
		if err := pc.pw.WritePacket(ci, data); err != nil {
			pc.err = fmt.Errorf("capture %s: write: %w", pc.path, err)
			return
		}
		pc.packets++
		if !stopping {
			select {
			case <-stop:
				stopping = true
			default:
			}
		}
	}
}

func (pc *portCapture) close() error {
	var err error
	if pc.w != nil {
		err = pc.w.Flush()
	}
	if pc.f != nil {
		if cerr := pc.f.Close(); err == nil {
			err = cerr
		}
	}
	if pc.tp != nil {
		pc.tp.Close()
	}
	return err
}

// Stop drains the rings, closes the files and returns per-port statistics.
func (s *Session) Stop() ([]Stats, error) {
	close(s.stop)
	s.wg.Wait()
	var out []Stats
	var errs []error
	for _, pc := range s.ports {
		st := Stats{Port: pc.port, File: pc.port.FileName(), Packets: pc.packets}
		if _, v3, err := pc.tp.SocketStats(); err == nil {
			st.Drops, st.Freezes = uint64(v3.Drops()), uint64(v3.QueueFreezes())
		} else {
			errs = append(errs, fmt.Errorf("capture %s: stats: %w", pc.path, err))
		}
		if pc.err != nil {
			errs = append(errs, pc.err)
		}
		if err := pc.close(); err != nil {
			errs = append(errs, fmt.Errorf("capture %s: %w", pc.path, err))
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}
