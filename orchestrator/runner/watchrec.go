package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"cclab/orchestrator/tcpsample"
	"cclab/orchestrator/watch"
)

// WatchFile is the run's recording of `cclab watch`'s stream: one JSON
// sample per line (watch.Sample).
const WatchFile = "watch.jsonl"

// watchRecorder is the extension `watch: D` asks for: the watch stream,
// every D, into watch.jsonl.
type watchRecorder struct {
	every time.Duration
	tel   *telemetry // the switch's ports, when the run attaches one

	f      *os.File
	w      *bufio.Writer
	n      int
	cancel context.CancelFunc
	done   chan error
}

// WatchJSON is what run.json records under extensions.watch.
type WatchJSON struct {
	File     string `json:"file"`
	EveryNs  int64  `json:"every_ns"`
	Samples  int    `json:"samples"`
	Problems string `json:"problems,omitempty"`
}

func (x *watchRecorder) Name() string { return "watch" }

func (x *watchRecorder) Start(ctx context.Context, env *Env) error {
	var hosts []tcpsample.Host
	for name, h := range env.Hosts {
		hosts = append(hosts, tcpsample.Host{Name: name, Netns: h.Netns})
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	var ports watch.PortsFunc
	if x.tel != nil && x.tel.portSmp != nil {
		ports = func(context.Context) ([]watch.PortSample, error) { return x.tel.portSmp.Sample() }
	}
	f, err := os.Create(filepath.Join(env.Dir, WatchFile))
	if err != nil {
		return fmt.Errorf("%s: %w", WatchFile, err)
	}
	x.f, x.w = f, bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(x.w)
	ctx, x.cancel = context.WithCancel(context.WithoutCancel(ctx))
	x.done = make(chan error, 1)
	go func() {
		x.done <- watch.Stream(ctx, hosts, ports, watch.Options{Interval: x.every}, func(s watch.Sample) error {
			x.n++
			return enc.Encode(s)
		})
	}()
	return nil
}

func (x *watchRecorder) Stop(context.Context) (any, error) {
	x.cancel()
	serr := <-x.done
	out := WatchJSON{File: WatchFile, EveryNs: int64(x.every), Samples: x.n}
	if serr != nil {
		out.Problems = serr.Error()
	}
	err := errors.Join(x.w.Flush(), x.f.Close())
	return out, err
}
