package workload

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed cdf/*.cdf
var builtinCDFs embed.FS

// A CDF is a flow-size distribution: sizes in bytes against cumulative
// percent, interpolated linearly.
type CDF struct {
	Name    string
	Size    []float64 // bytes, non-decreasing
	Percent []float64 // 0..100, non-decreasing, last is 100
	// StatedMean is the mean the file's header states (0 if none).
	StatedMean float64
}

var meanRe = regexp.MustCompile(`(?i)mean:\s*([0-9][0-9,]*(\.[0-9]+)?)`)

// LoadCDF returns a built-in CDF ("websearch", "fb_hadoop") or reads a file.
func LoadCDF(name string) (*CDF, error) {
	data, err := builtinCDFs.ReadFile("cdf/" + name + ".cdf")
	if err != nil {
		if strings.ContainsAny(name, "/.") {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("cdf %q: not built in (websearch, fb_hadoop) and not a readable file", name)
		}
	}
	return ParseCDF(name, data)
}

// ParseCDF reads "size percent" lines; '#' starts a comment.
func ParseCDF(name string, data []byte) (*CDF, error) {
	c := &CDF{Name: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			if m := meanRe.FindStringSubmatch(line); m != nil {
				c.StatedMean, _ = strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
			}
			continue
		}
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("cdf %s:%d: want \"size percent\", got %q", name, ln, line)
		}
		s, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || s < 0 || p < 0 || p > 100 {
			return nil, fmt.Errorf("cdf %s:%d: bad point %q", name, ln, line)
		}
		if n := len(c.Size); n > 0 && (s < c.Size[n-1] || p < c.Percent[n-1]) {
			return nil, fmt.Errorf("cdf %s:%d: sizes and percents must not decrease", name, ln)
		}
		c.Size = append(c.Size, s)
		c.Percent = append(c.Percent, p)
	}
	if len(c.Size) < 2 || c.Percent[len(c.Percent)-1] != 100 {
		return nil, fmt.Errorf("cdf %s: needs at least two points and must end at 100", name)
	}
	return c, nil
}

// Sample draws one flow size: r uniform in [0,100), linear interpolation,
// round down, at least 1 byte.
func (c *CDF) Sample(rng *rand.Rand) uint64 {
	return c.At(rng.Float64() * 100)
}

// At is the size at cumulative percent r.
func (c *CDF) At(r float64) uint64 {
	i := sort.Search(len(c.Percent), func(i int) bool { return c.Percent[i] > r })
	var s float64
	switch {
	case i == 0:
		s = c.Size[0]
	case i == len(c.Percent):
		s = c.Size[len(c.Size)-1]
	default:
		p0, p1 := c.Percent[i-1], c.Percent[i]
		s0, s1 := c.Size[i-1], c.Size[i]
		s = s0 + (r-p0)*(s1-s0)/(p1-p0)
	}
	s = math.Floor(s)
	if s < 1 {
		return 1
	}
	return uint64(s)
}

// Mean is the distribution's mean by the trapezoid rule (what the files'
// headers state).
func (c *CDF) Mean() float64 {
	var m float64
	for i := 1; i < len(c.Size); i++ {
		m += (c.Percent[i] - c.Percent[i-1]) / 100 * (c.Size[i] + c.Size[i-1]) / 2
	}
	return m
}
