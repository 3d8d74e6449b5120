package live

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/linkchange"
	"cclab/orchestrator/watch"
	"cclab/tcopt/intswitch"
)

// The control protocol: one JSON request per line on the supervisor's
// unix socket, one JSON response per line back. A connection may carry
// many requests (`cclab watch` keeps one open).
type request struct {
	Op string `json:"op"` // "status", "ports", "link"
	// Link: the target and the change (op "link").
	Link *linkchange.Request `json:"link,omitempty"`
	// Law: the registration the supervisor is to claim (op "claim").
	Law string `json:"law,omitempty"`
}

type response struct {
	Error  string             `json:"error,omitempty"`
	Status *Status            `json:"status,omitempty"`
	Ports  []watch.PortSample `json:"ports,omitempty"`
	Link   *linkchange.Record `json:"link,omitempty"`
}

// A Client is a connection to a run's supervisor.
type Client struct {
	id runid.ID
	c  net.Conn
	rd *bufio.Reader
}

// Dial connects to the supervisor of run id.
func Dial(ctx context.Context, id runid.ID) (*Client, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", SocketPath(id))
	if err != nil {
		return nil, explain(id, fmt.Errorf("connect to the supervisor of run %s: %w", id, err))
	}
	return &Client{id: id, c: c, rd: bufio.NewReaderSize(c, 1<<16)}, nil
}

// explain replaces a connection error by why, when the supervisor died.
// A refused connection means its socket has no listener: a supervisor
// that was just killed may still be exiting, so it is given a second to
// be gone before the error is taken as is.
func explain(id runid.ID, err error) error {
	st, serr := ReadState(id)
	if serr == nil && errors.Is(err, syscall.ECONNREFUSED) {
		for end := time.Now().Add(time.Second); st.Alive() && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if serr == nil && !st.Alive() {
		return fmt.Errorf("the supervisor of run %s (pid %d) is not running; its log: %s (cclab topo down --run %s, then up again)",
			id, st.PID, id.StateDir()+"/"+LogFile, id)
	}
	return err
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

func (c *Client) call(ctx context.Context, req request) (*response, error) {
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.c.SetDeadline(deadline)
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return nil, c.lost(err)
	}
	line, err := c.rd.ReadBytes('\n')
	if err != nil {
		return nil, c.lost(err)
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("supervisor: bad response: %w", err)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}

// lost explains a connection that broke: the supervisor may have died
// (give it a moment to be gone).
func (c *Client) lost(err error) error {
	for range 50 {
		if st, serr := ReadState(c.id); serr != nil || !st.Alive() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return explain(c.id, fmt.Errorf("supervisor of run %s: %w", c.id, err))
}

// Claim asks the supervisor to claim law's registration for as long as
// the topology is up (cc.HoldClaim): cc load, cc unload and runs then
// refuse to change it under the topology.
func (c *Client) Claim(ctx context.Context, law string) error {
	_, err := c.call(ctx, request{Op: "claim", Law: law})
	return err
}

// Status asks what is up and how healthy it is.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	r, err := c.call(ctx, request{Op: "status"})
	if err != nil {
		return nil, err
	}
	return r.Status, nil
}

// Ports samples every switch port's counters.
func (c *Client) Ports(ctx context.Context) ([]watch.PortSample, error) {
	r, err := c.call(ctx, request{Op: "ports"})
	if err != nil {
		return nil, err
	}
	return r.Ports, nil
}

// SetLink asks for a link change; it returns once the change is in force.
func (c *Client) SetLink(ctx context.Context, lr linkchange.Request) (*linkchange.Record, error) {
	r, err := c.call(ctx, request{Op: "link", Link: &lr})
	if err != nil {
		return nil, err
	}
	return r.Link, nil
}

// handler answers one request.
type handler func(ctx context.Context, req request) response

// serveConn answers the requests of one connection until it closes.
func serveConn(ctx context.Context, c net.Conn, h handler) {
	defer c.Close()
	rd := bufio.NewReaderSize(c, 1<<16)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return
		}
		var req request
		var resp response
		if err := json.Unmarshal(line, &req); err != nil {
			resp.Error = fmt.Sprintf("bad request: %v", err)
		} else {
			resp = h(ctx, req)
		}
		b, err := json.Marshal(resp)
		if err != nil {
			b, _ = json.Marshal(response{Error: err.Error()})
		}
		if _, err := c.Write(append(b, '\n')); err != nil {
			return
		}
	}
}

// ServePorts answers "ports" on run id's control socket until the
// returned stop is called: what a `cclab run` offers `cclab watch` while
// a variant runs (a live topology's supervisor answers more).
func ServePorts(id runid.ID, sw *intswitch.Switch) (stop func(), err error) {
	sock := SocketPath(id)
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ps := watch.NewPortSampler(sw) // each connection its own interval
			go serveConn(ctx, c, func(_ context.Context, req request) response {
				if req.Op != "ports" {
					return response{Error: fmt.Sprintf("run %s is a run, not a live topology: it answers ports only", id)}
				}
				smp, err := ps.Sample()
				if err != nil {
					return response{Error: err.Error()}
				}
				return response{Ports: smp}
			})
		}
	}()
	return func() {
		cancel()
		ln.Close()
		<-done
		os.Remove(sock)
	}, nil
}
