package main

// A replayed call as a test: its setup and call with the checks the delivered tests make
// (literals, error texts, a recovered panic's message), written from what it did alone, so the
// same behaviour on two versions gives the same text. Each module's tests become one file,
// built and run on this version; a test that does not pass loses its body.

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// replayBody is the statements of a test asserting what a call did (o); false when the call
// returned values none of which can be asserted.
func (r *Renderer) replayBody(c *Candidate, o *Outcome) (string, bool) {
	last := len(c.Steps) - 1
	upto := last
	if o.Panic != nil && o.Step >= 0 && o.Step < last {
		upto = o.Step
	}
	var b strings.Builder
	if tempIn(c, upto+1) {
		b.WriteString("dir := t.TempDir()\n")
	}
	if o.Panic != nil {
		b.WriteString(r.panicCheck(c, o, upto))
	}
	if c.Recv != nil {
		b.WriteString(recvDecl(r.m, c.Pkg, c) + "\n")
	}
	asserted, results := o.Panic != nil, false
	for i, st := range c.Steps[:upto+1] {
		if o.Panic != nil && i == upto {
			// What it returned before is asserted; the call that panics is the last line.
			b.WriteString(stepCall(c.Pkg, st) + "\n")
			break
		}
		results = results || st.C.Sig.Results().Len() > 0
		if i == 0 && len(c.Steps) == 1 && st.C.Sig.Results().Len() == 0 {
			decls, call, checks := r.argsLeft(c, o)
			b.WriteString(decls + call + "\n" + checks)
			asserted = asserted || checks != ""
			continue
		}
		var obs []Obs
		if i < len(o.Results) {
			obs = o.Results[i]
		}
		text, n := r.stepText(stepCall(c.Pkg, st), st.C, obs)
		b.WriteString(text)
		asserted = asserted || n > 0
	}
	if o.Panic == nil {
		checks := r.recvLeft(c, o)
		b.WriteString(checks)
		asserted = asserted || checks != ""
	}
	if results && !asserted {
		return "", false
	}
	return b.String(), true
}

// panicCheck is the deferred recover that asserts the panic's message (only that it panics
// when the message is not the same from run to run).
func (r *Renderer) panicCheck(c *Candidate, o *Outcome, step int) string {
	label := "the setup"
	if o.Step >= 0 {
		label = c.Steps[step].C.Func.Name() + "()"
	}
	msg := *o.Panic
	if r.unstable(msg) || len(msg) > 300 {
		return fmt.Sprintf("defer func() {\nif r := recover(); r == nil {\nt.Errorf(%s)\n}\n}()\n",
			strconv.Quote(label+" did not panic"))
	}
	q := strconv.Quote(msg)
	return fmt.Sprintf("defer func() {\nif r := recover(); fmt.Sprint(r) != %s {\nt.Errorf(\"%s panic = %%v, want %%q\", r, %s)\n}\n}()\n",
		q, label, q)
}

// argsLeft declares the slice, map and pointer arguments of a call with no results as
// variables, and checks what the call left in them: the declarations, the call, the checks.
func (r *Renderer) argsLeft(c *Candidate, o *Outcome) (string, string, string) {
	st := c.Steps[0]
	sig := st.C.Sig
	names := argNames(sig)
	var decls, checks strings.Builder
	args := make([]string, len(st.Args))
	post := 0
	for j, a := range st.Args {
		args[j] = a.Expr
		p := sig.Params().At(j)
		if !mutable(p.Type()) {
			continue
		}
		// The probe observes every such argument, in order, then the receiver.
		i := post
		post++
		if a.Nil || a.Expr == "nil" || i >= len(o.Post) {
			continue
		}
		ch, ok := r.valueCheck(o.Post[i], p.Type(), "arg"+strconv.Itoa(j), st.C.Func.Name()+"() left "+names[j])
		if !ok {
			continue
		}
		fmt.Fprintf(&decls, "var arg%d %s = %s\n", j, r.vals.typeString(p.Type()), a.Expr)
		args[j] = "arg" + strconv.Itoa(j)
		checks.WriteString(ch)
	}
	if sig.Variadic() && len(args) > 0 {
		args[len(args)-1] += "..."
	}
	return decls.String(), callee(c.Pkg, st.C) + "(" + strings.Join(args, ", ") + ")", checks.String()
}

// recvLeft checks the value `v` after a last call with no results (what such a call is judged
// by), when the calls could change it.
func (r *Renderer) recvLeft(c *Candidate, o *Outcome) string {
	lastStep := c.Steps[len(c.Steps)-1]
	if c.Recv == nil || lastStep.C.Sig.Results().Len() != 0 || len(o.Post) == 0 || lastStep.C.Recv == nil {
		return ""
	}
	obs := o.Post[len(o.Post)-1]
	var t types.Type = lastStep.C.Recv
	if strings.HasPrefix(obs.Go, "&") || strings.HasPrefix(obs.Go, "(*") {
		t = types.NewPointer(t)
	}
	changes := mutable(t)
	for _, st := range c.Steps {
		_, ptr := st.C.Sig.Recv().Type().(*types.Pointer)
		changes = changes || ptr
	}
	if !changes {
		return ""
	}
	ch, _ := r.valueCheck(obs, t, "v", lastStep.C.Func.Name()+"() left v")
	return ch
}

// shownOf is one line for a report: what the call returned, or its panic.
func shownOf(c *Candidate, o *Outcome) string {
	if o.Panic != nil {
		return "panics: " + clip(firstLine(*o.Panic), 160)
	}
	last := len(c.Steps) - 1
	var obs []Obs
	if last < len(o.Results) {
		obs = o.Results[last]
	}
	switch len(obs) {
	case 0:
		if c.Recv != nil && len(o.Post) > 0 {
			return "returns nothing, leaves v = " + showObs(o.Post[len(o.Post)-1])
		}
		return "returns nothing"
	case 1:
		return "returns " + showObs(obs[0])
	}
	parts := make([]string, len(obs))
	for i, x := range obs {
		parts[i] = showObs(x)
	}
	return "returns (" + strings.Join(parts, ", ") + ")"
}

// showObs is an observed value, short: its Go syntax, its text when that holds an address.
func showObs(o Obs) string {
	switch {
	case o.ErrText != nil:
		return "error " + strconv.Quote(clip(*o.ErrText, 100))
	case o.IsNil:
		return "nil"
	}
	s := o.Go
	if addressRe.MatchString(s) || len(s) > 100 {
		s = o.Text
	}
	return clip(s, 100)
}

// clip cuts a text to n bytes at most (on a character's boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// raisedIn says whether the call panicked or its last call returned a non-nil error last.
func raisedIn(c *Candidate, o *Outcome) bool {
	if o.Panic != nil {
		return true
	}
	last := len(c.Steps) - 1
	res := c.Steps[last].C.Sig.Results()
	if last >= len(o.Results) || res.Len() == 0 || len(o.Results[last]) != res.Len() {
		return false
	}
	return isError(res.At(res.Len()-1).Type()) && o.Results[last][res.Len()-1].ErrText != nil
}

// source is a module's test file: a test per entry with a body; "" when none has one.
func (rp *replayer) source(pkg *Pkg, mod int) string {
	var body strings.Builder
	for _, e := range rp.entries[mod] {
		if e.body != "" {
			fmt.Fprintf(&body, "func %s(t *testing.T) {\n%s}\n\n", e.out.Name, e.body)
		}
	}
	if body.Len() == 0 {
		return ""
	}
	file := rp.req.Replay.Modules[mod].File
	head := buildLine(pkg.Files[file]) + "package " + pkg.Name + "_test\n\nimport (\n\"testing\"\n)\n\n"
	src := withGroupedImports(rp.m, head+body.String())
	formatted, err := format.Source([]byte(src))
	if err != nil {
		if debug {
			logf("replay source of %s does not format: %v\n%s", file, err, src)
		}
		return src
	}
	return string(formatted)
}

// bodiesIn are the formatted bodies of a file's functions, a line each, one tab less.
func bodiesIn(src string) map[string][]string {
	out := map[string][]string{}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		return out
	}
	lines := strings.Split(src, "\n")
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		from, to := fset.Position(fd.Body.Lbrace).Line, fset.Position(fd.Body.Rbrace).Line
		body := []string{}
		for _, l := range lines[from : to-1] {
			body = append(body, strings.TrimPrefix(l, "\t"))
		}
		out[fd.Name.Name] = body
	}
	return out
}

// verify builds and runs the tests of a package's modules on this version until every one
// left passes (a test that does not loses its body), then records each module's file.
func (rp *replayer) verify(pkg *Pkg, mods []int) {
	files := map[int]string{}
	for k, i := range mods {
		files[i] = filepath.Join(pkg.AbsDir, fmt.Sprintf("tt_replay_%d_test.go", k+1))
	}
	defer func() {
		for _, path := range files {
			_ = os.Remove(path)
		}
	}()
	clean := false
	for attempt := 0; attempt < 4 && !clean; attempt++ {
		srcs := map[int]string{}
		var names []string
		for _, i := range mods {
			srcs[i] = rp.source(pkg, i)
			if srcs[i] == "" {
				_ = os.Remove(files[i])
				continue
			}
			_ = os.WriteFile(files[i], []byte(srcs[i]), 0o644)
			for _, e := range rp.entries[i] {
				if e.body != "" {
					names = append(names, e.out.Name)
				}
			}
		}
		if len(names) == 0 {
			break
		}
		bad := rp.failing(pkg, mods, files, srcs, names)
		clean = len(bad) == 0
		for _, i := range mods {
			for _, e := range rp.entries[i] {
				if bad[e.out.Name] || bad["*"] {
					e.body = ""
				}
			}
		}
	}
	for _, i := range mods {
		if !clean {
			for _, e := range rp.entries[i] {
				e.body = ""
			}
		}
		src := rp.source(pkg, i)
		rp.result.Modules[i].Source = src
		bodies := bodiesIn(src)
		for _, e := range rp.entries[i] {
			if e.body != "" {
				e.out.Body = bodies[e.out.Name]
			}
		}
	}
}

// failing runs the named tests; it returns those go rejects (at build, by vet or failing),
// "*" for all when go's complaint cannot be placed.
func (rp *replayer) failing(pkg *Pkg, mods []int, files map[int]string, srcs map[int]string, names []string) map[string]bool {
	home, tmp := filepath.Join(rp.req.Work, "replay-home"), filepath.Join(rp.req.Work, "replay-tmp")
	for _, d := range []string{home, tmp} {
		_ = os.RemoveAll(d)
		_ = os.MkdirAll(d, 0o755)
	}
	args := []string{"test", "-json", "-count=1", "-run", "^(" + strings.Join(names, "|") + ")$", "./" + pkg.Dir}
	out, stderr, _ := goCmdEnv(rp.m.Req, 5*time.Minute, []string{"TZ=UTC", "HOME=" + home, "TMPDIR=" + tmp}, args...)
	if debug {
		logf("replay check %v: %s", args, tail(string(stderr)+string(out), 600))
	}
	bad := map[string]bool{}
	for _, m := range goErr.FindAllStringSubmatch(string(stderr)+string(out), -1) {
		for _, i := range mods {
			if filepath.Base(m[1]) != filepath.Base(files[i]) {
				continue
			}
			line, _ := strconv.Atoi(m[2])
			if p, ok := locate(srcs[i])[line]; ok {
				bad[p.Func] = true
			} else {
				bad["*"] = true
			}
		}
	}
	if len(bad) > 0 {
		return bad
	}
	results := events(out)
	for _, n := range names {
		if results[pkg.ImportPath+"\x00"+n] != "pass" {
			bad[n] = true
		}
	}
	return bad
}
