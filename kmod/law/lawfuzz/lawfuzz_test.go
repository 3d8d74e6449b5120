package lawfuzz

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"cclab/kmod/law"
)

// Layout of one fuzz record (struct law_ack, a presence byte, struct
// int_echo: its head, the hop records, then the QCN feedback's count,
// key, |Fb| and 7 bytes of padding), natural alignment on 64-bit
// targets; the sizes are checked against C's in TestRecordLayout.
const (
	ackSize  = 48
	qcnOff   = 16 + law.MaxHopsConst*16
	echoSize = qcnOff + 16
)

func TestRecordLayout(t *testing.T) {
	if RecordSize != ackSize+1+echoSize {
		t.Fatalf("C record %d bytes, Go packer assumes %d", RecordSize, ackSize+1+echoSize)
	}
	if EchoQCNOffset != qcnOff {
		t.Fatalf("C echo's QCN fields at %d, Go packer assumes %d", EchoQCNOffset, qcnOff)
	}
}

type fuzzAck struct {
	now                                          uint64
	acked, ece, cwndSegs, mss, nxt, una, rtt, fl uint32
	echo                                         bool
	arrived                                      uint64
	count                                        uint32
	nhops, eflags                                uint8
	hops                                         [law.MaxHopsConst][4]uint32
	qcnCount, qcnKey                             uint32
	qcnFb                                        uint8
}

func (a *fuzzAck) pack(b []byte) []byte {
	le := binary.LittleEndian
	r := make([]byte, RecordSize)
	le.PutUint64(r[0:], a.now)
	for i, v := range []uint32{a.acked, a.ece, a.cwndSegs, a.mss, a.nxt, a.una, a.rtt, a.fl} {
		le.PutUint32(r[8+4*i:], v)
	}
	le.PutUint64(r[40:], 0xdeadbeefdeadbeef) // echo pointer: replaced by the driver
	if a.echo {
		r[ackSize] = 1
	}
	e := r[ackSize+1:]
	le.PutUint64(e[0:], a.arrived)
	le.PutUint32(e[8:], a.count)
	e[12], e[13] = a.nhops, a.eflags
	for i, h := range a.hops {
		for j, v := range h {
			le.PutUint32(e[16+16*i+4*j:], v)
		}
	}
	le.PutUint32(e[qcnOff:], a.qcnCount)
	le.PutUint32(e[qcnOff+4:], a.qcnKey)
	e[qcnOff+8] = a.qcnFb
	return append(b, r...)
}

var rates = []uint32{10, 100, 1000, 10000, 25000, 100000, 400000, 800000}

// scenario builds one plausible-to-hostile run: defaults with a few
// parameters changed, and n ACKs along a wandering path.
func scenario(rng *rand.Rand, l law.Law, n int) (params, acks []byte) {
	p, _ := law.DefaultParams(l)
	list := p.List()
	for k := rng.IntN(4); k > 0; k-- {
		q := list[rng.IntN(len(list))]
		var v uint64
		switch rng.IntN(4) {
		case 0:
			v = rng.Uint64()
		case 1:
			v = uint64(rng.Uint32())
		case 2:
			v = q.Value * uint64(rng.IntN(8)) / 4
		default:
			v = uint64(rng.IntN(3))
		}
		_ = p.Set(q.Name, v&0xffffffff|v&(uint64(rng.IntN(2))<<40))
	}
	var a fuzzAck
	a.mss = []uint32{0, 1, 536, 1448, 9000, 65535, 70000}[rng.IntN(7)]
	if rng.IntN(4) > 0 {
		a.mss = 1448
	}
	nh := uint8(rng.IntN(4) + 1)
	var rate [law.MaxHopsConst]uint32
	for i := range rate {
		rate[i] = rates[rng.IntN(len(rates))]
	}
	var tx, ts [law.MaxHopsConst]uint64
	for i := 0; i < n; i++ {
		dt := uint64(rng.IntN(50000))
		switch rng.IntN(50) {
		case 0:
			dt = rng.Uint64() >> uint(rng.IntN(64))
		case 1:
			a.now -= uint64(rng.IntN(1000)) // time going backwards
		}
		a.now += dt
		a.acked = uint32(rng.IntN(3) * 1448)
		if rng.IntN(30) == 0 {
			a.acked = rng.Uint32()
		}
		a.ece = uint32(rng.IntN(2)) * a.acked
		a.una += a.acked
		a.nxt = a.una + uint32(rng.IntN(100000))
		if rng.IntN(40) == 0 {
			a.una, a.nxt = rng.Uint32(), rng.Uint32()
		}
		a.rtt = uint32(rng.IntN(500))
		if rng.IntN(30) == 0 {
			a.rtt = rng.Uint32()
		}
		a.fl = uint32(rng.IntN(2))
		a.cwndSegs = rng.Uint32() >> uint(rng.IntN(32))
		a.echo = rng.IntN(6) > 0
		if rng.IntN(20) == 0 {
			nh = uint8(rng.IntN(8)) // includes 0 and > INT_MAX_HOPS
		}
		a.nhops = nh
		if rng.IntN(3) > 0 {
			a.count++
		}
		// QCN feedback: new records now and then (|Fb| 1..63, now and
		// then 0 or above), the count sometimes jumping or going back
		switch k := rng.IntN(40); {
		case k < 3:
			a.qcnCount++
			a.qcnKey = rng.Uint32()
			a.qcnFb = uint8(1 + rng.IntN(law.QCNFbMax))
		case k == 3:
			a.qcnCount, a.qcnFb = rng.Uint32(), uint8(rng.Uint32())
		}
		a.arrived = a.now - uint64(rng.IntN(10000))
		if rng.IntN(30) == 0 {
			a.arrived = rng.Uint64()
		}
		for h := range a.hops {
			tx[h] += uint64(rate[h]) * 125 * dt / 1000000 * uint64(rng.IntN(3)) / 2
			ts[h] += dt
			q := uint32(rng.IntN(200000))
			if rng.IntN(30) == 0 {
				q = rng.Uint32()
			}
			if rng.IntN(60) == 0 {
				rate[h] = rates[rng.IntN(len(rates))]
			}
			r := rate[h]
			if rng.IntN(80) == 0 {
				r = rng.Uint32()
			}
			a.hops[h] = [4]uint32{q, uint32(tx[h] % law.TxWrap), uint32(ts[h] % law.TsWrap), r}
		}
		acks = a.pack(acks)
	}
	return p.Raw(), acks
}

// TestShortFuzz is the fuzz run of the normal tests: a few seconds of
// generated scenarios per law under UBSan. Any undefined behaviour aborts
// the test binary; a broken output invariant fails it.
func TestShortFuzz(t *testing.T) {
	budget := 2 * time.Second
	if testing.Short() {
		budget = 300 * time.Millisecond
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(budget)
	runs := map[int]int{}
	accepted := map[int]int{}
	for time.Now().Before(deadline) {
		l := law.Law(1 + rng.IntN(Laws))
		params, acks := scenario(rng, l, 64)
		rc, err := Run(int(l), params, acks)
		if err != nil {
			t.Fatalf("%v\nparams %x\nacks %x", err, params, acks)
		}
		runs[int(l)]++
		if rc == OK {
			accepted[int(l)]++
		}
	}
	for l := 1; l <= Laws; l++ {
		if accepted[l] == 0 {
			t.Errorf("law %s: no accepted scenario in %d runs", law.Law(l), runs[l])
		}
	}
	t.Logf("runs per law %v, with valid parameters %v", runs, accepted)
}

// FuzzLaws is the open-ended target: go test -fuzz FuzzLaws ./kmod/law/lawfuzz
func FuzzLaws(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 7))
	for l := 1; l <= Laws; l++ {
		params, acks := scenario(rng, law.Law(l), 8)
		f.Add(uint8(l), params, acks)
		f.Add(uint8(l), []byte{}, acks)
	}
	f.Fuzz(func(t *testing.T, l uint8, params, acks []byte) {
		if _, err := Run(1+int(l)%Laws, params, acks); err != nil {
			t.Fatal(err)
		}
	})
}
