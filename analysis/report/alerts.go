package report

import (
	"bytes"
	"errors"
	"fmt"
	"html"
)

// ErrInterrupted is a run that a signal ended before its workload did
// (run.json "interrupted"): analysed only when asked (Config.Partial).
var ErrInterrupted = errors.New("the run was interrupted, its numbers are not results (--partial analyses it all the same)")

// AlertLines say what makes the numbers below partial: variants a signal
// interrupted, and captures that end in damage. They head the summary on
// screen and the pages, so that no one reads past them.
func (a *Analysis) AlertLines() []string {
	var l []string
	for _, in := range a.Interrupted {
		l = append(l, fmt.Sprintf("INTERRUPTED: %s: %s at %s; analysed with --partial, its flows stop where the signal cut them and its numbers are not results",
			in.Variant, in.Cause, in.At))
	}
	for _, c := range a.Captures {
		if c.Cut != nil {
			l = append(l, fmt.Sprintf("warning: capture %s %s; the packets after it are not analysed", c.File, c.Cut))
		}
	}
	return l
}

// alertHTML puts the alert lines at the top of a page.
func alertHTML(b *bytes.Buffer, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString("<div class=\"alert\"><strong>Partial analysis.</strong><ul>\n")
	for _, l := range lines {
		fmt.Fprintf(b, "<li>%s</li>\n", html.EscapeString(l))
	}
	b.WriteString("</ul></div>\n")
}
