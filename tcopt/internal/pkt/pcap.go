package pkt

import (
	"fmt"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// WritePcap writes Ethernet frames to a pcap file.
func WritePcap(path string, frames []Frame) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write pcap: %w", err)
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		f.Close()
		return fmt.Errorf("write pcap %s: %w", path, err)
	}
	for _, fr := range frames {
		ci := gopacket.CaptureInfo{Timestamp: fr.Time, CaptureLength: len(fr.Data), Length: fr.Len}
		if err := w.WritePacket(ci, fr.Data); err != nil {
			f.Close()
			return fmt.Errorf("write pcap %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write pcap %s: %w", path, err)
	}
	return nil
}
