package live

import (
	"context"

	"cclab/orchestrator/linkchange"
)

// setLink applies a change and logs it.
func (s *supervisor) setLink(ctx context.Context, r linkchange.Request) (*linkchange.Record, error) {
	rec, err := s.links.Apply(ctx, r)
	if err != nil {
		logf(s.log, "link %s: refused: %v", r.Target, err)
		return nil, err
	}
	logf(s.log, "link %s: %+v in force after %v", r.Target, r, rec.Took)
	return &rec, nil
}
