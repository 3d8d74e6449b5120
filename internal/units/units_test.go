package units

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParseRate(t *testing.T) {
	good := map[string]Rate{
		"1Gbit": 1e9, "100Mbit": 100e6, "10Gbps": 10e9, "1.5Gbit/s": 1.5e9,
		"25 gbit": 25e9, "500kbit": 500e3,
	}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1000", "", "Gbit", "1GB", "1 furlong", "-1Gbit"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]Size{"1500B": 1500, "64KB": 64000, "64KiB": 65536, "1MB": 1e6, "2MiB": 2 << 20}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1500", "64Kbit", "x"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestParseDuration(t *testing.T) {
	if d, err := ParseDuration("20us"); err != nil || d.D() != 20*time.Microsecond {
		t.Errorf("20us = %v, %v", d, err)
	}
	if d, err := ParseDuration("0"); err != nil || d != 0 {
		t.Errorf("0 = %v, %v", d, err)
	}
	if _, err := ParseDuration("20"); err == nil {
		t.Error("bare 20 accepted")
	}
}

func TestYAMLLineNumbers(t *testing.T) {
	var v struct {
		Rate Rate `yaml:"rate"`
		Buf  Size `yaml:"buffer"`
	}
	err := yaml.Unmarshal([]byte("rate: 1Gbit\nbuffer: 1000\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "no unit") {
		t.Fatalf("want a line-2 no-unit error, got %v", err)
	}
	if err := yaml.Unmarshal([]byte("rate: 10Gbit\nbuffer: 256KB\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Rate != 10e9 || v.Buf != 256000 {
		t.Fatalf("got %+v", v)
	}
}
