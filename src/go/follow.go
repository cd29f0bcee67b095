//go:build cgo

package planctl

import (
	"context"
	"time"
)

// EventStream follows the event log from a cursor: Next returns each event
// after it, in order, waiting for new ones.  Make one with DB.Follow.  It
// uses its DB's handle between waits; it is not safe for use by several
// goroutines at once.
type EventStream struct {
	db   *DB
	cfg  eventsConfig
	poll time.Duration
	buf  []Event
}

// Follow returns a stream of the events after seq since (0: from the
// first; use Events(ctx, WithEventsTail(1)) for the latest seq), that
// looks for new ones every poll (0: 100 ms).  WithEventsInstance and
// WithEventsRun narrow it; WithEventsLimit sets how many one read takes.
func (db *DB) Follow(since int64, poll time.Duration, opts ...EventsOption) *EventStream {
	s := &EventStream{db: db, poll: poll}
	for _, o := range opts {
		o(&s.cfg)
	}
	s.cfg.since = since
	s.cfg.tail = 0
	if s.poll <= 0 {
		s.poll = 100 * time.Millisecond
	}
	return s
}

// Cursor returns the seq of the last event Next returned (or the since
// the stream started from): Follow(Cursor(), ...) resumes after it.
func (s *EventStream) Cursor() int64 {
	if len(s.buf) > 0 {
		return s.buf[0].Seq - 1
	}
	return s.cfg.since
}

// Next returns the next event, waiting until there is one or ctx ends
// (then ctx's error).  A refusal of the library (the instance deleted, the
// database gone) is returned as its *Error.
func (s *EventStream) Next(ctx context.Context) (Event, error) {
	for len(s.buf) == 0 {
		ev, err := s.db.events(ctx, &s.cfg)
		if err != nil {
			return Event{}, err
		}
		if len(ev.Events) > 0 {
			s.buf = ev.Events
			s.cfg.since = ev.LastSeq
			break
		}
		t := time.NewTimer(s.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return Event{}, ctx.Err()
		case <-t.C:
		}
	}
	e := s.buf[0]
	s.buf = s.buf[1:]
	return e, nil
}
