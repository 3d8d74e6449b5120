package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/internal/runid"
	"cclab/tcopt"
	"cclab/tcopt/internal/pkt"
)

// attach attaches an agent for a fresh run with its echo map pinned inside
// the run's own BPF directory (the shared /sys/fs/bpf/cclab-cc belongs to
// the laws and to concurrent tests), and checks Close leaves nothing.
func attach(t *testing.T) (*Agent, runid.ID) {
	t.Helper()
	id := runid.New()
	a, err := Attach(context.Background(), id, Options{EchoPinDir: filepath.Join(id.BPFDir(), "cc")})
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, p := range []string{a.Cgroup(), id.BPFDir()} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("Close left %s", p)
			}
		}
	})
	return a, id
}

func monotonicNs() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

const bulkSize = 16 << 20

// TestBulkTransfer: with the agent attached, bulk transfers complete at the
// speed of the same path without it, in MTU-sized packets that each carry
// the option, the receiver echoes every forward option on its ACKs and the
// sender's socket storage holds the echoes.
func TestBulkTransfer(t *testing.T) {
	for _, cfg := range []pathConfig{
		{gso: false, timestamps: false},
		{gso: true, timestamps: false},
		{gso: false, timestamps: true},
		{gso: true, timestamps: true},
		{tso: true, timestamps: false},
	} {
		t.Run(fmt.Sprintf("gso=%v,tso=%v,timestamps=%v", cfg.gso, cfg.tso, cfg.timestamps), func(t *testing.T) {
			testBulk(t, cfg)
		})
	}
}

func testBulk(t *testing.T, cfg pathConfig) {
	a, id := attach(t)
	p := newPath(t, id, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The capture runs during the baseline too, so both pay for it.
	var capt *pkt.Capture
	if err := nsexec.Do(p.rcv, func() (err error) { capt, err = pkt.Listen("r0", 2048); return }); err != nil {
		t.Fatal(err)
	}
	defer capt.Close()

	// Baseline: sockets made before the process joins the cgroup are not
	// the agent's.
	var base time.Duration
	for i := 0; i < 2; i++ {
		ln := listen(t, p.rcv, p.rcvIP, 5001+i)
		sink := sinkOne(ln)
		c := dial(t, p.snd, p.rcvIP, 5001+i)
		d, err := send(ctx, c, bulkSize, sink)
		if err != nil {
			t.Fatalf("baseline transfer: %v", err)
		}
		if base == 0 || d < base {
			base = d
		}
	}
	if st, _ := a.Stats(); st != (Stats{}) {
		t.Fatalf("agent counted sockets outside its cgroup: %+v", st)
	}

	if err := a.AddProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}

	ln := listen(t, p.rcv, p.rcvIP, 5010)
	sink := sinkOne(ln)
	c := dial(t, p.snd, p.rcvIP, 5010)
	d, err := send(ctx, c, bulkSize, sink)
	if err != nil {
		t.Fatalf("transfer with the option: %v", err)
	}
	t.Logf("%d MB: %v with the agent (%.0f Mbit/s), %v without (%.0f Mbit/s)",
		bulkSize>>20, d, bulkSize*8/d.Seconds()/1e6, base, bulkSize*8/base.Seconds()/1e6)
	if d > 2*base+200*time.Millisecond {
		t.Errorf("transfer with the option took %v, without %v: not full speed", d, base)
	}

	// The last ACKs may still be on their way to the sender.
	want := 5
	if cfg.timestamps {
		want = 3
	}
	var echoes, data, mtu, fwd int
	checkFrames := func(frames []pkt.Frame) (errs []string) {
		echoes, data, mtu, fwd = 0, 0, 0, 0
		for _, f := range frames {
			s, err := pkt.Parse(f.IP())
			if err != nil || s.Flags&pkt.SYN != 0 || (s.SPort != 5010 && s.DPort != 5010) {
				continue
			}
			raw := tcopt.Find(s.Options)
			if s.Src == p.sndIP && len(s.Payload) > 0 {
				data++
				if s.IPLen > 1500 && !cfg.tso {
					errs = append(errs, fmt.Sprintf("data packet of %d bytes exceeds the MTU", s.IPLen))
				}
				if s.IPLen == 1500 {
					mtu++
				}
				if !s.ChecksumOK && !cfg.tso {
					errs = append(errs, fmt.Sprintf("data packet seq %d: bad TCP checksum", s.Seq))
				}
				o, err := tcopt.Parse(raw)
				if err != nil || o.Echo || len(o.Records) != 0 || o.Slots != want {
					errs = append(errs, fmt.Sprintf("data packet seq %d: option %x (%v)", s.Seq, raw, err))
					continue
				}
				fwd++
			}
			if s.Src == p.rcvIP && len(s.Payload) == 0 && s.Flags&pkt.FIN == 0 && raw != nil {
				o, err := tcopt.Parse(raw)
				// An echo has no empty slots: 5 bytes without a switch.
				if err != nil || !o.Echo || len(o.Records) != 0 || o.Slots != 0 {
					errs = append(errs, fmt.Sprintf("ACK %d: option %x (%v)", s.Ack, raw, err))
					continue
				}
				echoes++
			}
		}
		return errs
	}
	var st Stats
	var e Echo
	var ok bool
	// Wait for the last ACKs to reach the sender.
	var last uint64
	err = capt.Wait(ctx, func([]pkt.Frame) bool {
		st, _ = a.Stats()
		e, ok, _ = a.Echo(fdOf(t, c))
		settled := ok && st.EchoesParsed > 0 && st.EchoesParsed == last && uint64(e.Count) == st.EchoesParsed
		last = st.EchoesParsed
		time.Sleep(50 * time.Millisecond)
		return settled
	})
	if err != nil {
		t.Fatalf("echoes written %d, parsed %d, storage %+v (%v)", st.EchoesWritten, st.EchoesParsed, e, ok)
	}
	capt.Close()
	frames := capt.Frames()
	if errs := checkFrames(frames); len(errs) > 0 {
		t.Errorf("%d problems in %d frames, first: %v", len(errs), len(frames), errs[:min(5, len(errs))])
	}
	t.Logf("stats %+v; captured %d data packets (%d MTU-sized, %d with the forward option), %d echoes",
		st, data, mtu, fwd, echoes)
	if cfg.tso {
		// Whole TSO skbs cross the veth: no MTU to check here.
		if data == 0 || fwd != data {
			t.Errorf("%d of %d TSO skbs carry the forward option", fwd, data)
		}
	} else {
		if data < bulkSize/1500 {
			t.Errorf("captured %d data packets for %d bytes", data, bulkSize)
		}
		if mtu < data*9/10 {
			t.Errorf("only %d of %d data packets are MTU-sized", mtu, data)
		}
	}
	if echoes == 0 || uint64(echoes) > st.EchoesWritten {
		t.Errorf("captured %d echoes, agent wrote %d", echoes, st.EchoesWritten)
	}
	// Identical echoes queued in the sender's socket backlog coalesce
	// into one ACK (tcp_add_backlog), so fewer are parsed than written;
	// none is parsed that was not written.
	if st.EchoesParsed > st.EchoesWritten {
		t.Errorf("echoes written %d, parsed %d", st.EchoesWritten, st.EchoesParsed)
	}
	// TCP always builds GSO skbs (whatever ethtool says): the option is
	// written once per skb and copied onto each of its packets.
	if st.ForwardsParsed < st.OptionsWritten*9/10 {
		t.Errorf("options written %d, forwards parsed %d", st.OptionsWritten, st.ForwardsParsed)
	}
	// SACK blocks after a drop on the veth leave too little room for an
	// echo on a few ACKs: counted, rare.
	if st.Malformed != 0 || st.BadRecords != 0 || st.ReserveFailed > st.EchoesWritten/10 {
		t.Errorf("stats %+v for %d data packets with the option", st, fwd)
	}
	if e.NHops != 0 || e.Flags != 0 {
		t.Errorf("echo without a switch: %+v", e)
	}
	if now := monotonicNs(); e.ArrivedNs > now || now-e.ArrivedNs > uint64(time.Minute) {
		t.Errorf("echo arrived at %d ns, now %d", e.ArrivedNs, now)
	}
}
