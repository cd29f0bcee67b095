package planctl_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"planctl.dev/planctl"
)

// schemaDir is where the JSON Schemas of planctl-json(7)'s documents are:
// PLANCTL_SCHEMA_DIR (the build's schema directory, as the suite sets it),
// else written here by the planctl on the PATH (planctl __schema DIR).
func schemaDir(t *testing.T) string {
	if dir := os.Getenv("PLANCTL_SCHEMA_DIR"); dir != "" {
		return dir
	}
	dir := filepath.Join(t.TempDir(), "schema")
	out, err := exec.Command("planctl", "__schema", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("no schemas: set PLANCTL_SCHEMA_DIR to the build's schema "+
			"directory, or put the built planctl on the PATH (%v: %s)", err, out)
	}
	return dir
}

// schemaAt is the schema of the object at path in document doc: keys
// separated by '.', arrays and nullable values gone through.
func schemaAt(t *testing.T, dir, doc, path string) map[string]interface{} {
	b, err := os.ReadFile(filepath.Join(dir, doc+".json"))
	if err != nil {
		t.Fatalf("schema of %s: %v", doc, err)
	}
	var s map[string]interface{}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("schema of %s: %v", doc, err)
	}
	for _, key := range strings.Split(path, ".") {
		if key == "" {
			continue
		}
		for s["items"] != nil {
			s = s["items"].(map[string]interface{})
		}
		props, _ := s["properties"].(map[string]interface{})
		next, ok := props[key].(map[string]interface{})
		if !ok {
			t.Fatalf("schema of %s has no %s (at %s)", doc, path, key)
		}
		s = next
	}
	for s["items"] != nil {
		s = s["items"].(map[string]interface{})
	}
	return s
}

// TestViewsMatchSchemas checks the typed structs against the schemas
// generated from the tables of planctl-json(7): every json tag of a
// struct is a field of each place of a document the struct decodes, so a
// struct cannot name a field the documents do not have.
func TestViewsMatchSchemas(t *testing.T) {
	dir := schemaDir(t)
	run := "plans.run"
	places := []struct {
		v     interface{}
		where []string // "doc:path"
		skip  []string // tags a run of history has not (status's only)
	}{
		{planctl.InstanceStatus{}, []string{"status:"}, nil},
		{planctl.DefinitionRef{}, []string{"status:definition", "instances:instances.definition"}, nil},
		{planctl.PlanStatus{}, []string{"status:plans"}, nil},
		{planctl.Run{}, []string{"status:" + run, "wait:run"}, nil},
		{planctl.Run{}, []string{"history:runs"}, []string{"params", "phases"}},
		{planctl.Phase{}, []string{"status:" + run + ".phases"}, nil},
		{planctl.Step{}, []string{"status:" + run + ".phases.steps"}, nil},
		{planctl.Attempt{}, []string{"status:" + run + ".phases.steps.attempts"}, nil},
		{planctl.Parameter{}, []string{"status:parameters"}, nil},
		{planctl.EngineInfo{}, []string{"status:engine", "engines:engines"}, nil},
		{planctl.Waiting{}, []string{"status:waiting"}, nil},
		{planctl.History{}, []string{"history:"}, nil},
		{planctl.Event{}, []string{"events:events"}, nil},
		{planctl.Events{}, []string{"events:"}, nil},
		{planctl.Engines{}, []string{"engines:"}, nil},
		{planctl.Instances{}, []string{"instances:"}, nil},
		{planctl.InstanceInfo{}, []string{"instances:instances"}, nil},
		{planctl.Validation{}, []string{"validate:"}, nil},
		{planctl.ValidationError{}, []string{"validate:errors"}, nil},
	}
	for _, p := range places {
		typ := reflect.TypeOf(p.v)
		for _, w := range p.where {
			parts := strings.SplitN(w, ":", 2)
			s := schemaAt(t, dir, parts[0], parts[1])
			props, _ := s["properties"].(map[string]interface{})
			if s["additionalProperties"] != false {
				t.Errorf("%s: the schema of %s is not closed", typ.Name(), w)
			}
			var missing []string
			for i := 0; i < typ.NumField(); i++ {
				tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
				if tag == "" || tag == "-" || contains(p.skip, tag) {
					continue
				}
				if _, ok := props[tag]; !ok {
					missing = append(missing, tag)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("%s: json tags %v are not fields of %s in its schema (planctl-json(7))",
					typ.Name(), missing, w)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
