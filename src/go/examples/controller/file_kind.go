package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"planctl.dev/planctl"
)

// fileSpec is the spec of a File task: write path with content (its
// {{ NAME }} replaced by the run's parameters), or delete it.
type fileSpec struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Action  string `json:"action"`
}

// fileTask is the executor of the File kind.  It is idempotent, as every
// task must be: a file that already holds its content is left alone, one
// already gone is deleted.
func fileTask(ctx context.Context, t *planctl.Task) (planctl.Result, error) {
	var spec fileSpec
	if err := json.Unmarshal(t.Spec, &spec); err != nil {
		return planctl.Result{}, planctl.Fatal(fmt.Errorf("bad spec: %v", err))
	}
	var params map[string]interface{}
	if err := json.Unmarshal(t.Params, &params); err != nil {
		return planctl.Result{}, planctl.Fatal(fmt.Errorf("bad parameters: %v", err))
	}
	dir, _ := params["DIR"].(string)
	if dir == "" || filepath.IsAbs(spec.Path) || strings.Contains(spec.Path, "..") {
		return planctl.Result{}, planctl.Fatal(fmt.Errorf("path %q outside the site's directory %q", spec.Path, dir))
	}
	path := filepath.Join(dir, spec.Path)
	if spec.Action == "delete" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return planctl.Result{}, err // ERROR: retried
		}
		os.Remove(filepath.Dir(path)) // a directory left empty; fails otherwise
		return planctl.Result{Message: spec.Path + " removed"}, nil
	}
	content, err := render(spec.Content, params)
	if err != nil {
		return planctl.Result{}, planctl.Fatal(err) // retrying cannot fix it
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return planctl.Result{Message: spec.Path + " up to date"}, nil
	}
	if err := ctx.Err(); err != nil {
		return planctl.Result{}, err // cancelled before the write
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return planctl.Result{}, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return planctl.Result{}, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return planctl.Result{}, err
	}
	return planctl.Result{Message: spec.Path + " written"}, nil
}

// render replaces each {{ NAME }} by the parameter's value.
func render(tmpl string, params map[string]interface{}) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(tmpl, "{{")
		if i < 0 {
			b.WriteString(tmpl)
			return b.String(), nil
		}
		j := strings.Index(tmpl[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unclosed {{ in %q", tmpl)
		}
		name := strings.TrimSpace(tmpl[i+2 : i+j])
		v, ok := params[name]
		if !ok {
			return "", fmt.Errorf("the template names %s, which is not a parameter", name)
		}
		b.WriteString(tmpl[:i])
		fmt.Fprint(&b, v)
		tmpl = tmpl[i+j+2:]
	}
}
