package series

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWindowsAndJain(t *testing.T) {
	ms := int64(time.Millisecond)
	w := NewWindows[int](1000, time.Millisecond)
	// Flows 0 and 1 share equally for 10 ms; from 5 ms flow 2 joins and
	// takes everything while 0 and 1 starve.
	for i := int64(0); i < 10; i++ {
		ts := 1000 + i*ms + ms/2
		if i < 5 {
			w.Add(0, ts, 1000)
			w.Add(1, ts, 1000)
		} else {
			w.Add(2, ts, 3000)
		}
	}
	w.Add(0, 999, 5) // before the origin: dropped
	if r := w.Rate(0, 0, 5); len(r) != 6 || r[0].V != 8e6 || r[5].V != 0 || r[3].T != 3*time.Millisecond {
		t.Fatalf("rate %v", r)
	}
	group := map[int]Interval{0: {1000, 1000 + 10*ms}, 1: {1000, 1000 + 10*ms}, 2: {1000 + 5*ms, 1000 + 10*ms}}
	js := Jain(w, group)
	if len(js) != 10 {
		t.Fatalf("%d points: %v", len(js), js)
	}
	for i, p := range js {
		want, flows := 1.0, 2
		if i >= 5 {
			want, flows = 1.0/3, 3
		}
		if p.Flows != flows || math.Abs(p.Index.F()-want) > 1e-12 {
			t.Errorf("window %d: %+v, want %d flows index %v", i, p, flows, want)
		}
	}
}

func TestQueuesAndCDF(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "queues.csv")
	os.WriteFile(p, []byte("time_ns,node,iface,qlen_bytes,tx_bytes\n100,s0,p1,0,0\n1000100,s0,p1,3000,125000\n2000100,s0,p1,1500,250000\n"), 0o644)
	qs, err := ReadQueues(p, 900, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || len(qs[0].Samples) != 3 || qs[0].Samples[1].T != time.Millisecond || qs[0].Summary.Max != 3000 {
		t.Fatalf("queues %+v", qs)
	}
	if tx := qs[0].TxRate; len(tx) != 2 || tx[0].V != 1e9 {
		t.Fatalf("tx rate %v, want 1 Gbit/s", tx)
	}
	cdf := CDF([]float64{3, 1, 2, 2})
	if len(cdf) != 3 || cdf[0] != [2]float64{1, 0.25} || cdf[1] != [2]float64{2, 0.75} || cdf[2] != [2]float64{3, 1} {
		t.Fatalf("cdf %v", cdf)
	}
	os.WriteFile(p, []byte("time_ns,node,iface,qlen_bytes,tx_bytes\n100,s0,p1,x,0\n"), 0o644)
	if _, err := ReadQueues(p, 0, 0); err == nil {
		t.Fatal("bad number accepted")
	}
	os.WriteFile(p, []byte("time_ns,node\n"), 0o644)
	if _, err := ReadQueues(p, 0, 0); err == nil {
		t.Fatal("missing columns accepted")
	}
}

// cc_trace.csv leaves pacing_bps empty while a socket is not paced (DCTCP
// always; the other laws before their first ACK): such rows have a window
// and a signal but no pacing point.
func TestReadTracesUnpacedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cc_trace.csv")
	if err := os.WriteFile(path, []byte(`time_ns,sock,cc,cwnd_bytes,pacing_bps,signal,signal_name,note,law_cwnd_bytes,rtt_us,nhops
1000,a:1-b:2,dctcp,2920,,0,alpha,INCREASE,1460,4407,0
2000,a:1-b:2,dctcp,14600,,1000000,alpha,INIT,14600,0,0
3000,c:1-d:2,hpcc,14600,80000000,500000,U,INIT,14600,0,1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	trs, err := ReadTraces(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 2 || len(trs[0].Cwnd) != 2 || len(trs[0].Pacing) != 0 || len(trs[1].Pacing) != 1 || trs[1].Pacing[0].V != 80e6 {
		t.Fatalf("traces %+v: want dctcp with 2 windows and no pacing, hpcc with one pacing point", trs)
	}
	if err := os.WriteFile(path, []byte("time_ns,sock,cc,cwnd_bytes,pacing_bps,signal,signal_name\n1,a,x,1,fast,0,s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTraces(path, 0, 0); err == nil || !strings.Contains(err.Error(), `pacing_bps "fast": not an integer`) {
		t.Fatalf("a malformed pacing rate: %v", err)
	}
}
