package main

// Panics: a runtime panic in the module's own code on well-typed input is a code defect (the
// shortest call per kind kept); one the doc comment announces, or that the test's own input
// caused (a nil, an index it passed, a zero divisor), is not.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// judgePanic sorts a panic: a defect, an expected panic, or the candidate's own doing.
func (s *Search) judgePanic(c *Candidate, o *Outcome) {
	step := o.Step
	if step < 0 {
		return // a constructor of the receiver or an argument failed
	}
	if step >= len(c.Steps) {
		step = len(c.Steps) - 1
	}
	fn := c.Steps[step].C
	culprit, own := s.culprit(o)
	msg := *o.Panic
	if culprit == nil || strings.HasSuffix(culprit.File, "_test.go") {
		return // a constructor's error, or the probe's own doing
	}
	// A nil the test passed, or a value made around the type's constructors, is the test's
	// doing.
	nilInput := c.Recv != nil && (c.Recv.Nil || c.Recv.Bypass)
	for _, a := range c.Steps[step].Args {
		nilInput = nilInput || a.Nil || a.Bypass
	}
	bypass := c.Recv != nil && c.Recv.Bypass
	for _, a := range c.Steps[step].Args {
		bypass = bypass || a.Bypass
	}
	if bypass && o.Runtime {
		return
	}
	if o.Runtime && own && !fn.Panics && !callersDoing(msg, c.Steps[step].Args, nilInput) {
		s.defect(c, o, step, culprit)
		return
	}
	if len(c.Steps) > 1 || nilInput {
		return // sequences that panic, and nil inputs, say nothing a user relies on
	}
	s.cover(o)
	class := fn.Pkg.Alias + "." + fn.Name + "|panic"
	if !s.shown[class] {
		s.shown[class] = true
		s.kept = append(s.kept, &Kept{C: c, O: o})
	}
}

// culprit is the frame that panicked (the first outside the runtime), and whether it is the
// module's own code.
func (s *Search) culprit(o *Outcome) (*Frame, bool) {
	for i := range o.Frames {
		f := &o.Frames[i]
		if strings.HasPrefix(f.Func, "runtime.") {
			continue
		}
		rel, err := filepath.Rel(s.m.Root, f.File)
		own := err == nil && !strings.HasPrefix(rel, "..") && !strings.HasSuffix(f.File, "_test.go") &&
			!strings.Contains(rel, "vendor/")
		return f, own
	}
	return nil, false
}

// callersDoing says whether a runtime panic is the test's own doing rather than the code's:
// an index or a bound the test passed (Less(3, 1) on an empty collection), a zero divisor it
// passed, a nil it passed being dereferenced, or an interface value of the wrong dynamic type
// (a type assertion, an unhashable map key) it passed as `any`.
func callersDoing(msg string, args []Value, nilInput bool) bool {
	switch {
	case strings.Contains(msg, "stack overflow"):
		return true
	case strings.Contains(msg, "interface conversion") || strings.Contains(msg, "unhashable type"):
		return true
	case nilInput && (strings.Contains(msg, "nil pointer") || strings.Contains(msg, "nil map")):
		return true
	case strings.Contains(msg, "integer divide by zero"):
		for _, a := range args {
			if a.Expr == "0" {
				return true
			}
		}
	case strings.Contains(msg, "out of range"):
		// The indexes and bounds in brackets: [5], [:7], [3:2].
		for _, m := range outOfRange.FindAllStringSubmatch(msg, -1) {
			for _, n := range strings.Split(m[1], ":") {
				for _, a := range args {
					if n != "" && constantValue(a.Expr) == n {
						return true
					}
				}
			}
		}
	}
	return false
}

var outOfRange = regexp.MustCompile(`\[([-\d:]+)\]`)

// constantValue is the decimal value of an integer argument the generator writes ("" for any
// other expression).
func constantValue(expr string) string {
	limits := map[string]string{
		"math.MaxInt": "9223372036854775807", "math.MinInt": "-9223372036854775808",
		"math.MaxInt64": "9223372036854775807", "math.MinInt64": "-9223372036854775808",
		"math.MaxInt32": "2147483647", "math.MinInt32": "-2147483648",
		"math.MaxInt16": "32767", "math.MinInt16": "-32768", "math.MaxInt8": "127", "math.MinInt8": "-128",
		"math.MaxUint8": "255", "math.MaxUint16": "65535", "math.MaxUint32": "4294967295",
		"math.MaxUint64": "18446744073709551615", "math.MaxUint": "18446744073709551615",
	}
	if v, ok := limits[expr]; ok {
		return v
	}
	if _, err := strconv.ParseInt(expr, 10, 64); err == nil {
		return expr
	}
	return ""
}

// panicClass is a runtime error's kind, for keeping one defect (the shortest call) per kind.
func panicClass(msg string) string {
	for _, k := range []string{"index out of range", "slice bounds out of range", "nil map",
		"nil pointer dereference", "integer divide by zero", "makeslice", "negative shift"} {
		if strings.Contains(msg, k) {
			return k
		}
	}
	return "runtime error"
}

func (s *Search) defect(c *Candidate, o *Outcome, step int, at *Frame) {
	fn := c.Steps[step].C
	class := panicClass(*o.Panic)
	rel, _ := filepath.Rel(s.m.Root, at.File)
	d := &Defect{C: c, O: o, Class: class, Call: callText(c, step+1),
		Evidence: fmt.Sprintf("%s panics: %s (at %s:%d)", callText(c, step+1), *o.Panic, filepath.ToSlash(rel), at.Line)}
	for i, old := range s.defects {
		oldFn := old.C.Steps[min(old.O.Step, len(old.C.Steps)-1)].C
		if oldFn == fn && old.Class == class {
			if len(d.Call) < len(old.Call) {
				s.defects[i] = d
			}
			return
		}
	}
	s.defects = append(s.defects, d)
}
