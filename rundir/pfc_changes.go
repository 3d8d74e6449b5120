package rundir

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PFCChangesColumns is pfc.csv's header, in order.
var PFCChangesColumns = []string{"time_ns", "node", "iface", "event", "peer_node", "peer_iface", "crossing_ns", "due_ns", "lateness_ns", "hop"}

// The events of pfc.csv.
const (
	PFCPause        = "pause"
	PFCResume       = "resume"
	PFCResumeAtStop = "resume_at_stop" // a port still paused when the controller stopped
)

// PFCChange is one row of pfc.csv: a pause or resume the PFC controller
// applied to an egress (Node, Iface), asked for by the downstream ingress
// (PeerNode, PeerIface). Times are CLOCK_MONOTONIC ns: TimeNs when the
// change was in force, CrossingNs when the switch saw the crossing, DueNs
// that plus the link's delay (both 0 for resume_at_stop).
type PFCChange struct {
	TimeNs              int64
	Node, Iface         string
	Event               string
	PeerNode, PeerIface string
	CrossingNs, DueNs   int64
	Hop                 int // how far the pause spread (pauses only)
	Line                int // line in pfc.csv, when read from one
}

// WritePFCChanges writes pfc.csv at path; lateness_ns is TimeNs - DueNs
// (empty without a due time).
func WritePFCChanges(path string, rows []PFCChange) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(PFCChangesColumns)
	for _, r := range rows {
		crossing, due, late := "", "", ""
		if r.DueNs != 0 {
			crossing, due = strconv.FormatInt(r.CrossingNs, 10), strconv.FormatInt(r.DueNs, 10)
			late = strconv.FormatInt(r.TimeNs-r.DueNs, 10)
		}
		w.Write([]string{strconv.FormatInt(r.TimeNs, 10), r.Node, r.Iface, r.Event, r.PeerNode, r.PeerIface,
			crossing, due, late, strconv.Itoa(r.Hop)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// ReadPFCChanges reads the pfc.csv of run directory dir; a missing file
// (a lossy run) gives (nil, nil).
func ReadPFCChanges(dir string) ([]PFCChange, error) {
	path := filepath.Join(dir, PFCCSV)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParsePFCChanges(path, b)
}

// ParsePFCChanges parses pfc.csv's text b; path names it in errors, which
// give the line.
func ParsePFCChanges(path string, b []byte) ([]PFCChange, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = len(PFCChangesColumns)
	hdr, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty, want header %s", path, strings.Join(PFCChangesColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if strings.Join(hdr, ",") != strings.Join(PFCChangesColumns, ",") {
		return nil, fmt.Errorf("%s: header %q, want %s", path, strings.Join(hdr, ","), strings.Join(PFCChangesColumns, ","))
	}
	out := []PFCChange{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		c, err := parsePFCChange(rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		c.Line = line
		out = append(out, c)
	}
}

func parsePFCChange(rec []string) (PFCChange, error) {
	c := PFCChange{Node: rec[1], Iface: rec[2], Event: rec[3], PeerNode: rec[4], PeerIface: rec[5]}
	var err error
	num := func(name, s string, empty bool) int64 {
		if err != nil || (s == "" && empty) {
			return 0
		}
		v, e := strconv.ParseInt(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("%s %q is not an integer", name, s)
		}
		return v
	}
	atStop := c.Event == PFCResumeAtStop
	c.TimeNs = num("time_ns", rec[0], false)
	c.CrossingNs = num("crossing_ns", rec[6], atStop)
	c.DueNs = num("due_ns", rec[7], atStop)
	late := num("lateness_ns", rec[8], atStop)
	c.Hop = int(num("hop", rec[9], false))
	if err != nil {
		return c, err
	}
	switch {
	case c.TimeNs <= 0:
		return c, fmt.Errorf("time_ns %d", c.TimeNs)
	case !atStop && late != c.TimeNs-c.DueNs:
		return c, fmt.Errorf("lateness_ns %d, but time - due is %d", late, c.TimeNs-c.DueNs)
	case c.Event == PFCPause && c.Hop < 1:
		return c, fmt.Errorf("a pause at hop %d (at least 1)", c.Hop)
	case c.Event != PFCPause && c.Event != PFCResume && !atStop:
		return c, fmt.Errorf("event %q: want %s, %s or %s", c.Event, PFCPause, PFCResume, PFCResumeAtStop)
	case c.Node == "" || c.Iface == "" || c.PeerNode == "" || c.PeerIface == "":
		return c, errors.New("a port is not named")
	case c.Hop < 0 || (c.Event != PFCPause && c.Hop != 0):
		return c, fmt.Errorf("hop %d for a %s", c.Hop, c.Event)
	case !atStop && c.DueNs < c.CrossingNs:
		return c, fmt.Errorf("due %d before the crossing %d", c.DueNs, c.CrossingNs)
	}
	return c, nil
}
