package testnet

import (
	"net"
	"testing"

	"cclab/internal/nsexec"

	"github.com/vishvananda/netns"
)

// The pair carries TCP from a to b, and its namespaces go with the test.
func TestPairCarriesTCP(t *testing.T) {
	var a, b End
	t.Run("pair", func(t *testing.T) {
		a, b = Pair(t)
		var ln net.Listener
		if err := nsexec.Do(b.Netns, func() (err error) {
			ln, err = net.Listen("tcp", b.Addr.String()+":7000")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Write([]byte("ok"))
				c.Close()
			}
		}()
		var c net.Conn
		if err := nsexec.Do(a.Netns, func() (err error) {
			c, err = net.Dial("tcp", b.Addr.String()+":7000")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 2)
		if _, err := c.Read(buf); err != nil || string(buf) != "ok" {
			t.Fatalf("read %q, %v", buf, err)
		}
	})
	for _, n := range []string{a.Netns, b.Netns} {
		if h, err := netns.GetFromName(n); err == nil {
			h.Close()
			t.Errorf("namespace %s outlived its test", n)
		}
	}
}
