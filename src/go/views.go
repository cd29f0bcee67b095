package planctl

/*
#include <stdlib.h>
#include "planctl.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"time"
)

// Status is a status of planctl-json(7): of a run, phase, step or attempt,
// as stored in the database.
type Status string

// The statuses.
const (
	StatusNeverRun   Status = "NEVER_RUN"
	StatusQueued     Status = "QUEUED"
	StatusPending    Status = "PENDING"
	StatusInProgress Status = "IN_PROGRESS"
	StatusPaused     Status = "PAUSED"
	StatusError      Status = "ERROR"
	StatusComplete   Status = "COMPLETE"
	StatusFatalError Status = "FATAL_ERROR"
	StatusCancelled  Status = "CANCELLED"
)

// Terminal reports whether a run in this status has ended (COMPLETE,
// FATAL_ERROR or CANCELLED).
func (s Status) Terminal() bool {
	return s == StatusComplete || s == StatusFatalError || s == StatusCancelled
}

// DefinitionRef names a definition version.
type DefinitionRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// InstanceStatus is the status document of planctl-json(7) for one
// instance.
type InstanceStatus struct {
	Schema     int             `json:"schema"`
	Instance   string          `json:"instance"`
	Definition DefinitionRef   `json:"definition"`
	ActiveRun  *int64          `json:"active_run"`
	Queued     []int64         `json:"queued"`
	Plans      []PlanStatus    `json:"plans"`
	Parameters []Parameter     `json:"parameters"`
	Engine     *EngineInfo     `json:"engine"`
	Waiting    *Waiting        `json:"waiting"`
	Raw        json.RawMessage `json:"-"` // the document as the library gave it
}

// Plan returns the plan named name, or nil.
func (s *InstanceStatus) Plan(name string) *PlanStatus {
	for i := range s.Plans {
		if s.Plans[i].Name == name {
			return &s.Plans[i]
		}
	}
	return nil
}

// PlanStatus is one plan of a status document, with its active run, else
// its latest (nil: it never ran).
type PlanStatus struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy"`
	Status   Status `json:"status"`
	Run      *Run   `json:"run"`
}

// Run is one run: in a status document with its phases, in a history
// without.
type Run struct {
	ID                int64                      `json:"id"`
	UID               string                     `json:"uid"`
	Plan              string                     `json:"plan"`
	DefinitionVersion string                     `json:"definition_version"`
	Status            Status                     `json:"status"`
	Trigger           string                     `json:"trigger"`
	Reason            *string                    `json:"reason"`
	RetryOf           *int64                     `json:"retry_of"`
	CreatedAt         *time.Time                 `json:"created_at"`
	StartedAt         *time.Time                 `json:"started_at"`
	FinishedAt        *time.Time                 `json:"finished_at"`
	DurationMS        *int64                     `json:"duration_ms"`
	Message           *string                    `json:"message"`
	Params            map[string]json.RawMessage `json:"params"`
	Phases            []Phase                    `json:"phases"`
}

// Phase is one phase of a run.
type Phase struct {
	Name       string     `json:"name"`
	Strategy   string     `json:"strategy"`
	Status     Status     `json:"status"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Message    *string    `json:"message"`
	Steps      []Step     `json:"steps"`
}

// Step is one step of a phase.
type Step struct {
	Name          string            `json:"name"`
	Status        Status            `json:"status"`
	Attempt       int               `json:"attempt"`
	MaxAttempts   int               `json:"max_attempts"`
	NextAttemptAt *time.Time        `json:"next_attempt_at"`
	StartedAt     *time.Time        `json:"started_at"`
	FinishedAt    *time.Time        `json:"finished_at"`
	Message       *string           `json:"message"`
	Outputs       map[string]string `json:"outputs"`  // with StatusRun
	Attempts      []Attempt         `json:"attempts"` // with StatusRun
}

// Attempt is one try of a step (in a status document asked WithStatusRun).
type Attempt struct {
	Number     int               `json:"number"`
	Status     Status            `json:"status"`
	StartedAt  *time.Time        `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at"`
	ExitCode   *int              `json:"exit_code"`
	Message    *string           `json:"message"`
	Output     *string           `json:"output"`
	Outputs    map[string]string `json:"outputs"`
}

// Parameter is one parameter of an instance.
type Parameter struct {
	Name    string          `json:"name"`
	Value   json.RawMessage `json:"value"` // typed; "***" for a secret; null when none
	Default bool            `json:"default"`
	Secret  bool            `json:"secret"`
}

// EngineInfo describes an engine that holds the database.
type EngineInfo struct {
	PID      int64      `json:"pid"`
	Host     string     `json:"host"`
	Since    *time.Time `json:"since"`
	LastSeen *time.Time `json:"last_seen"`
	Alive    bool       `json:"alive"`
	Token    *int64     `json:"token"`
	// PostgreSQL only.
	Name     string `json:"name"`
	Holds    bool   `json:"holds"`
	AgeMS    *int64 `json:"age_ms"`
	Runs     *int64 `json:"runs"`
	Capacity *int64 `json:"capacity"`
	TTLMS    *int64 `json:"ttl_ms"`
	ID       *int64 `json:"id"`
}

// Waiting says why an active run waits.
type Waiting struct {
	Run         int64      `json:"run"`
	Cause       string     `json:"cause"` // "executor" or "slot"
	Kind        *string    `json:"kind"`
	Concurrency *int       `json:"concurrency"`
	Since       *time.Time `json:"since"`
}

type statusConfig struct {
	plan string
	run  int64
}

// StatusOption changes what Status shows.
type StatusOption func(*statusConfig)

// WithStatusPlan shows only that plan.
func WithStatusPlan(plan string) StatusOption { return func(c *statusConfig) { c.plan = plan } }

// WithStatusRun shows that run in its plan's place, with its steps'
// attempts and outputs.
func WithStatusRun(run int64) StatusOption { return func(c *statusConfig) { c.run = run } }

// Status reads the status document of an instance (one snapshot).
func (db *DB) Status(ctx context.Context, instance string, opts ...StatusOption) (*InstanceStatus, error) {
	var cfg statusConfig
	for _, o := range opts {
		o(&cfg)
	}
	b, err := db.doJSON(ctx, func(out **C.char, p *C.planctl) C.int {
		n, pl := cstr(instance), cstrOrNil(cfg.plan)
		defer free(n)
		defer free(pl)
		o := C.planctl_status_options{version: C.PLANCTL_STATUS_OPTIONS_VERSION, plan: pl, run: C.int64_t(cfg.run)}
		return C.planctl_status_json(out, p, n, &o)
	})
	if err != nil {
		return nil, err
	}
	s := &InstanceStatus{Raw: b}
	return s, json.Unmarshal(b, s)
}

// History is the history document of planctl-json(7): an instance's
// runs, newest first.
type History struct {
	Schema   int             `json:"schema"`
	Instance string          `json:"instance"`
	Runs     []Run           `json:"runs"`
	Raw      json.RawMessage `json:"-"`
}

// HistoryOption changes what History reads.
type HistoryOption func(*C.planctl_history_options, *[]*C.char)

// WithHistoryPlan reads only runs of that plan.
func WithHistoryPlan(plan string) HistoryOption {
	return func(o *C.planctl_history_options, keep *[]*C.char) {
		o.plan = cstr(plan)
		*keep = append(*keep, o.plan)
	}
}

// WithHistoryLimit reads at most n runs (default 20).
func WithHistoryLimit(n int) HistoryOption {
	return func(o *C.planctl_history_options, _ *[]*C.char) { o.limit = C.int(n) }
}

// WithHistoryBefore reads only runs with a smaller id (for paging).
func WithHistoryBefore(run int64) HistoryOption {
	return func(o *C.planctl_history_options, _ *[]*C.char) { o.before = C.int64_t(run) }
}

// History reads an instance's runs, newest first.
func (db *DB) History(ctx context.Context, instance string, opts ...HistoryOption) (*History, error) {
	o := C.planctl_history_options{version: C.PLANCTL_HISTORY_OPTIONS_VERSION}
	var keep []*C.char
	for _, f := range opts {
		f(&o, &keep)
	}
	defer func() {
		for _, k := range keep {
			free(k)
		}
	}()
	b, err := db.doJSON(ctx, func(out **C.char, p *C.planctl) C.int {
		n := cstr(instance)
		defer free(n)
		return C.planctl_history_json(out, p, n, &o)
	})
	if err != nil {
		return nil, err
	}
	h := &History{Raw: b}
	return h, json.Unmarshal(b, h)
}

// Event is one status change (or note) of the event log.
type Event struct {
	Seq      int64           `json:"seq"`
	At       *time.Time      `json:"at"`
	Instance string          `json:"instance"`
	Run      *int64          `json:"run"`
	Entity   string          `json:"entity"` // run, phase, step or instance
	Phase    *string         `json:"phase"`
	Step     *string         `json:"step"`
	Attempt  *int            `json:"attempt"`
	From     *Status         `json:"from"`
	To       *Status         `json:"to"`
	Actor    string          `json:"actor"`
	Message  *string         `json:"message"`
	Data     json.RawMessage `json:"data"`
}

// Events is the events document of planctl-json(7): events oldest first,
// and LastSeq, the cursor to ask again from.
type Events struct {
	Schema  int             `json:"schema"`
	Events  []Event         `json:"events"`
	LastSeq int64           `json:"last_seq"`
	Raw     json.RawMessage `json:"-"`
}

type eventsConfig struct {
	instance string
	run      int64
	since    int64
	limit    int
	tail     int
}

// EventsOption changes what Events and Follow read.
type EventsOption func(*eventsConfig)

// WithEventsInstance reads only that instance's events.
func WithEventsInstance(name string) EventsOption {
	return func(c *eventsConfig) { c.instance = name }
}

// WithEventsRun reads only that run's events.
func WithEventsRun(run int64) EventsOption { return func(c *eventsConfig) { c.run = run } }

// WithEventsSince reads only events after seq (a cursor: Events.LastSeq).
func WithEventsSince(seq int64) EventsOption { return func(c *eventsConfig) { c.since = seq } }

// WithEventsLimit reads at most n events (default 1000).
func WithEventsLimit(n int) EventsOption { return func(c *eventsConfig) { c.limit = n } }

// WithEventsTail reads only the last n of the events selected.
func WithEventsTail(n int) EventsOption { return func(c *eventsConfig) { c.tail = n } }

// Events reads the event log, oldest first.
func (db *DB) Events(ctx context.Context, opts ...EventsOption) (*Events, error) {
	var cfg eventsConfig
	for _, o := range opts {
		o(&cfg)
	}
	return db.events(ctx, &cfg)
}

func (db *DB) events(ctx context.Context, cfg *eventsConfig) (*Events, error) {
	b, err := db.doJSON(ctx, func(out **C.char, p *C.planctl) C.int {
		in := cstrOrNil(cfg.instance)
		defer free(in)
		o := C.planctl_events_options{version: C.PLANCTL_EVENTS_OPTIONS_VERSION, instance: in,
			run: C.int64_t(cfg.run), since: C.int64_t(cfg.since), limit: C.int(cfg.limit), tail: C.int(cfg.tail)}
		return C.planctl_events_json(out, p, &o)
	})
	if err != nil {
		return nil, err
	}
	ev := &Events{Raw: b}
	return ev, json.Unmarshal(b, ev)
}

// Engines is the engines document of planctl-json(7): the engines that
// hold the database.
type Engines struct {
	Schema  int             `json:"schema"`
	Engines []EngineInfo    `json:"engines"`
	Raw     json.RawMessage `json:"-"`
}

// Engines reads which engines hold the database.
func (db *DB) Engines(ctx context.Context) (*Engines, error) {
	b, err := db.doJSON(ctx, func(out **C.char, p *C.planctl) C.int { return C.planctl_engines_json(out, p) })
	if err != nil {
		return nil, err
	}
	e := &Engines{Raw: b}
	return e, json.Unmarshal(b, e)
}

// Instances is the instances document of planctl-json(7).
type Instances struct {
	Schema    int             `json:"schema"`
	Instances []InstanceInfo  `json:"instances"`
	Raw       json.RawMessage `json:"-"`
}

// InstanceInfo is one instance of the instances document.
type InstanceInfo struct {
	Name       string        `json:"name"`
	Definition DefinitionRef `json:"definition"`
	Status     Status        `json:"status"`
	ActiveRun  *int64        `json:"active_run"`
	Deleting   bool          `json:"deleting"`
	CreatedAt  *time.Time    `json:"created_at"`
}

// Instances lists the instances, by name.
func (db *DB) Instances(ctx context.Context) (*Instances, error) {
	b, err := db.doJSON(ctx, func(out **C.char, p *C.planctl) C.int { return C.planctl_instances_json(out, p) })
	if err != nil {
		return nil, err
	}
	in := &Instances{Raw: b}
	return in, json.Unmarshal(b, in)
}
