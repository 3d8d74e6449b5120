package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// report.html in a real browser (Debian's chromium, headless; scripts/
// bootstrap installs it): the page loads without console errors,
// exceptions or failed requests, every figure is drawn (its rendered
// pixels are not one blank colour), and every link points at something
// (an anchor on the page or a file of the analysis).
func TestReportInBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: scripts/bootstrap installs it (make test runs it)")
	}
	dir, _ := makeRun(t, twoLawsThreeFlows())
	a, err := AnalyzeRun(context.Background(), dir, Config{Window: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "analysis")
	if _, err := Write(a, out); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, "report.html")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.NoSandbox, chromedp.Flag("headless", true), chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	// Problems the page reports, collected until the checks are done.
	var mu sync.Mutex
	var problems []string
	var wg sync.WaitGroup
	collect := func(seq func(yield func(string, error) bool)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for msg, err := range seq {
				if err != nil {
					return // the context ended
				}
				mu.Lock()
				problems = append(problems, msg)
				mu.Unlock()
			}
		}()
	}
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatalf("start chromium: %v", err)
	}
	evctx, stopEvents := context.WithCancel(ctx)
	collect(mapEvents(chromedp.Events(evctx, runtime.ConsoleAPICalled), func(e runtime.EventConsoleAPICalled) (string, bool) {
		return "console." + string(e.Type), e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning
	}))
	collect(mapEvents(chromedp.Events(evctx, runtime.ExceptionThrown), func(e runtime.EventExceptionThrown) (string, bool) {
		return "exception: " + e.ExceptionDetails.Text, true
	}))
	collect(mapEvents(chromedp.Events(evctx, network.LoadingFailed), func(e network.EventLoadingFailed) (string, bool) {
		return "request failed: " + e.ErrorText, true
	}))

	tctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("load %s: %v", page, err)
	}
	figures, err := chromedp.Run(tctx, chromedp.Nodes(chromedp.CSSAll("figure")))
	if err != nil {
		t.Fatalf("figures: %v", err)
	}
	links, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href]")).map(a => a.getAttribute("href"))`))
	if err != nil {
		t.Fatalf("links: %v", err)
	}
	figs, err := a.Figures()
	if err != nil {
		t.Fatal(err)
	}
	if len(figures) != len(figs) || len(figures) == 0 {
		t.Fatalf("the page shows %d figures, the analysis drew %d", len(figures), len(figs))
	}
	for i, n := range figures {
		shot, err := chromedp.Run(tctx, chromedp.Screenshot(chromedp.NodeIDs{n.NodeID}))
		if err != nil {
			t.Fatalf("figure %d (%s): %v", i, figs[i].Name, err)
		}
		if frac := inked(t, shot); frac < 0.01 {
			t.Errorf("figure %d (%s) looks blank: %.2f %% of its pixels differ from the background", i, figs[i].Name, 100*frac)
		}
	}
	for _, h := range links {
		switch {
		case strings.HasPrefix(h, "#"):
			ok, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`document.getElementById(`+jsString(h[1:])+`) !== null`))
			if err != nil || !ok {
				t.Errorf("link %s: no such anchor", h)
			}
		case strings.Contains(h, "://"):
			t.Errorf("link %s leaves the report (it must stand alone)", h)
		default:
			if _, err := os.Stat(filepath.Join(out, h)); err != nil {
				t.Errorf("link %s: %v", h, err)
			}
		}
	}
	stopEvents()
	wg.Wait()
	for _, p := range problems {
		t.Errorf("report.html: %s", p)
	}
}

// inked is the share of a screenshot's pixels unlike its first pixel.
func inked(t *testing.T, shot []byte) float64 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, _ := bg.RGBA()
	diff, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if r != r0 || g != g0 || bl != b0 {
				diff++
			}
		}
	}
	if total == 0 {
		return 0
	}
	return float64(diff) / float64(total)
}

// mapEvents turns a stream of protocol events into the messages of those
// that are problems.
func mapEvents[E any](seq func(yield func(E, error) bool), f func(E) (string, bool)) func(yield func(string, error) bool) {
	return func(yield func(string, error) bool) {
		for e, err := range seq {
			if err != nil {
				yield("", err)
				return
			}
			if msg, bad := f(e); bad && !yield(msg, nil) {
				return
			}
		}
	}
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
