package delay

import "cclab/orchestrator/delay/line"

// LineOf gives the tests of updates a server's line, to hand it bad ones.
func LineOf(s *Server) *line.Line { return s.l }
