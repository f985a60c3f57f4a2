package main

// The probe: a round's candidates become one harness file in their package's folder
// (`package <name>_test`, one TestTTProbeN per candidate), type-checked here first so a
// candidate that does not compile is dropped before go builds anything, built once with
// -cover, and run one candidate a process: its own coverage profile, a timeout, and homes of
// its own that must stay empty.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Step is one call: of a callable, on the candidate's value `v` for a method.
type Step struct {
	C    *Callable
	Args []Value
}

// Candidate is one call (L1) or a sequence of method calls on one value (L2).
type Candidate struct {
	ID    int
	Pkg   *Pkg
	Recv  *Value
	Steps []Step
}

// Obs is one observed value.
type Obs struct {
	Go      string  `json:"g"`
	Text    string  `json:"s"`
	ErrText *string `json:"e"`
	IsNil   bool    `json:"n"`
}

// Frame is one frame of a panic's stack.
type Frame struct {
	Func string `json:"fn"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Outcome is what one candidate's run showed.
type Outcome struct {
	ID      int     `json:"id"`
	Results [][]Obs `json:"results"`
	// The receiver after the last call, and the arguments after a call with no results.
	Post    []Obs   `json:"post"`
	Panic   *string `json:"panic"`
	Runtime bool    `json:"runtime"`
	Step    int     `json:"step"`
	Frames  []Frame `json:"frames"`
	// Filled in here.
	Features []string `json:"-"`
	// Every block the profile lists, ran or not.
	Blocks  map[string]Block `json:"-"`
	Effects []string         `json:"-"`
	Stopped string           `json:"-"` // timed out, exited, killed: no outcome
	Output  string           `json:"-"`
}

const probeHelpers = `
func ttProbe(t *testing.T, id int, f func(dir string, step *int) ([][]interface{}, []interface{})) {
	step := 0
	defer func() {
		if r := recover(); r != nil {
			_, isRuntime := r.(runtime.Error)
			pcs := make([]uintptr, 64)
			n := runtime.Callers(1, pcs)
			frames := runtime.CallersFrames(pcs[:n])
			var after []map[string]interface{}
			seen := false
			for {
				fr, more := frames.Next()
				if seen && len(after) < 8 {
					after = append(after, map[string]interface{}{"fn": fr.Function, "file": fr.File, "line": fr.Line})
				}
				if fr.Function == "runtime.gopanic" {
					seen = true
				}
				if !more {
					break
				}
			}
			ttEmit(map[string]interface{}{"id": id, "panic": fmt.Sprint(r), "runtime": isRuntime, "step": step, "frames": after})
		}
	}()
	results, post := f(t.TempDir(), &step)
	out := [][]map[string]interface{}{}
	for _, rs := range results {
		var obs []map[string]interface{}
		for _, r := range rs {
			obs = append(obs, ttObserve(r))
		}
		out = append(out, obs)
	}
	var posts []map[string]interface{}
	for _, p := range post {
		posts = append(posts, ttObserve(p))
	}
	ttEmit(map[string]interface{}{"id": id, "results": out, "post": posts})
}

func ttObserve(v interface{}) map[string]interface{} {
	o := map[string]interface{}{"g": fmt.Sprintf("%#v", v), "s": fmt.Sprint(v), "n": v == nil}
	if e, ok := v.(error); ok && e != nil {
		o["e"] = e.Error()
	}
	return o
}

func ttEmit(v map[string]interface{}) {
	b, _ := json.Marshal(v)
	fmt.Println("\nTTOBS " + string(b))
}
`

// Probe runs candidates of one package.
type Probe struct {
	m       *Module
	pkg     *Pkg
	layer   string
	work    string
	timeout time.Duration
	builds  int
	// Why candidates did not compile, by callable, and (when not nil) by candidate.
	compileErrors map[string]string
	dropped       map[int]string
}

// drop records why a candidate does not compile.
func (p *Probe) drop(c *Candidate, msg string) {
	p.compileErrors[c.Steps[len(c.Steps)-1].C.Name] = msg
	if p.dropped != nil {
		p.dropped[c.ID] = msg
	}
}

func (p *Probe) fileName() string {
	return "tt_probe_" + strings.SplitN(p.layer, "-", 2)[0] + "_test.go"
}

// render writes the harness; lines maps each candidate to its line range.
func (p *Probe) render(cands []*Candidate) (string, map[int][2]int) {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s_test\n\nimport (\n", p.pkg.Name)
	b.WriteString("\t\"encoding/json\"\n\t\"fmt\"\n\t\"runtime\"\n\t\"testing\"\n")
	b.WriteString(")\n")
	lines := map[int][2]int{}
	line := strings.Count(b.String(), "\n") + 1
	var body strings.Builder
	for _, c := range cands {
		start := line
		text := p.candidateFunc(c)
		body.WriteString(text)
		line += strings.Count(text, "\n")
		lines[c.ID] = [2]int{start, line - 1}
	}
	body.WriteString(probeHelpers)
	src := b.String() + body.String()
	return withImports(p.m, src, map[string]bool{"encoding/json": true, "fmt": true, "runtime": true, "testing": true}), lines
}

// withImports adds the imports the body's qualifiers need after the import block's closing
// parenthesis (the first `)\n` of the file); it keeps line numbers: added imports go on the
// import block's last line.
func withImports(m *Module, src string, have map[string]bool) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		return src
	}
	need := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
			if path, known := m.Imports[id.Name]; known && !have[path] {
				need[path+"\x00"+id.Name] = true
			}
		}
		return true
	})
	if len(need) == 0 {
		return src
	}
	var keys []string
	for k := range need {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var add []string
	for _, k := range keys {
		parts := strings.SplitN(k, "\x00", 2)
		spec := strconv.Quote(parts[0])
		if base := filepath.Base(parts[0]); base != parts[1] {
			spec = parts[1] + " " + spec
		}
		add = append(add, spec)
	}
	i := strings.Index(src, "\n)\n")
	if i < 0 {
		return src
	}
	return src[:i] + "; " + strings.Join(add, "; ") + src[i:]
}

// withGroupedImports writes a file's import block as goimports does: the standard library,
// a blank line, then the rest (the package under test).
func withGroupedImports(m *Module, src string) string {
	src = withImports(m, src, map[string]bool{})
	start := strings.Index(src, "import (\n")
	end := strings.Index(src, "\n)\n")
	if start < 0 || end < start {
		return src
	}
	var std, other []string
	seen := map[string]bool{}
	for _, spec := range strings.FieldsFunc(src[start+len("import (\n"):end], func(r rune) bool { return r == ';' || r == '\n' }) {
		spec = strings.TrimSpace(spec)
		if spec == "" || seen[spec] {
			continue
		}
		seen[spec] = true
		path := spec[strings.Index(spec, "\""):]
		if first := strings.SplitN(strings.Trim(path, "\""), "/", 2)[0]; strings.Contains(first, ".") {
			other = append(other, spec)
		} else {
			std = append(std, spec)
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	block := strings.Join(std, "\n")
	if len(other) > 0 {
		block += "\n\n" + strings.Join(other, "\n")
	}
	return src[:start] + "import (\n" + block + src[end:]
}

// candidateFunc is one candidate's test in the harness.
func (p *Probe) candidateFunc(c *Candidate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "func TestTTProbe%d(t *testing.T) {\n\tttProbe(t, %d, func(dir string, step *int) ([][]interface{}, []interface{}) {\n", c.ID, c.ID)
	// Step -1: making the receiver and the arguments (a constructor's panic is not the call's).
	b.WriteString("\t\t_ = dir\n\t\tvar results [][]interface{}\n\t\t*step = -1\n")
	if c.Recv != nil {
		fmt.Fprintf(&b, "\t\t%s\n", recvDecl(p.m, p.pkg, c))
	}
	var post []string
	for i, s := range c.Steps {
		fmt.Fprintf(&b, "\t\t*step = -1\n")
		args := make([]string, len(s.Args))
		for j, a := range s.Args {
			name := fmt.Sprintf("a%d_%d", i, j)
			fmt.Fprintf(&b, "\t\tvar %s %s = %s\n", name, paramType(s.C, j, p), a.Expr)
			args[j] = name
			if s.C.Sig.Variadic() && j == len(s.Args)-1 {
				args[j] += "..."
			}
			if s.C.Sig.Results().Len() == 0 && len(c.Steps) == 1 && mutable(s.C.Sig.Params().At(j).Type()) {
				post = append(post, name)
			}
		}
		call := callee(p.pkg, s.C) + "(" + strings.Join(args, ", ") + ")"
		fmt.Fprintf(&b, "\t\t*step = %d\n", i)
		n := s.C.Sig.Results().Len()
		if n == 0 {
			fmt.Fprintf(&b, "\t\t%s\n\t\tresults = append(results, []interface{}{})\n", call)
			continue
		}
		rs := make([]string, n)
		for k := range rs {
			rs[k] = fmt.Sprintf("r%d_%d", i, k)
		}
		fmt.Fprintf(&b, "\t\t%s := %s\n", strings.Join(rs, ", "), call)
		fmt.Fprintf(&b, "\t\tresults = append(results, []interface{}{%s})\n", strings.Join(rs, ", "))
	}
	if c.Recv != nil {
		post = append(post, "v")
	}
	fmt.Fprintf(&b, "\t\treturn results, []interface{}{%s}\n\t})\n}\n\n", strings.Join(post, ", "))
	return b.String()
}

// recvDecl declares the candidate's value `v`, spelling its type when the value is written as
// the underlying type's.
func recvDecl(m *Module, pkg *Pkg, c *Candidate) string {
	if !c.Recv.Convert {
		return "v := " + c.Recv.Expr
	}
	t := newValues(m, pkg).typeString(c.Steps[0].C.Sig.Recv().Type())
	return "var v " + t + " = " + c.Recv.Expr
}

// paramType is how a parameter's argument variable is declared (a variadic one as its slice).
func paramType(c *Callable, j int, p *Probe) string {
	return newValues(p.m, p.pkg).typeString(c.Sig.Params().At(j).Type())
}

// mutable types show a call's effect on its argument.
func mutable(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Slice, *types.Map, *types.Pointer:
		return true
	}
	return false
}

// callee is how a test calls the callable: pkg.F, or v.M on the candidate's value.
func callee(pkg *Pkg, c *Callable) string {
	if c.Recv != nil {
		return "v." + c.Func.Name()
	}
	return pkg.Alias + "." + c.Name
}

var errLine = regexp.MustCompile(`(?m)^(.*?\.go):(\d+):(\d+): (.*)$`)

// typeCheck drops candidates whose code does not type-check (as their own file, importing the
// package under test as loaded); it returns the survivors and the harness.
func (p *Probe) typeCheck(cands []*Candidate) ([]*Candidate, string, map[int][2]int) {
	for round := 0; ; round++ {
		src, lines := p.render(cands)
		bad := p.checkErrors(src, lines)
		if len(bad) == 0 || round > 6 {
			return cands, src, lines
		}
		var kept []*Candidate
		for _, c := range cands {
			if msg, drop := bad[c.ID]; drop {
				p.drop(c, msg)
			} else {
				kept = append(kept, c)
			}
		}
		if len(kept) == len(cands) {
			return kept, src, lines
		}
		cands = kept
	}
}

// checkErrors are the type errors of a harness, by candidate.
func (p *Probe) checkErrors(src string, lines map[int][2]int) map[int]string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p.fileName(), src, 0)
	bad := map[int]string{}
	blame := func(line int, msg string) {
		for id, r := range lines {
			if line >= r[0] && line <= r[1] {
				if _, seen := bad[id]; !seen {
					bad[id] = msg
				}
			}
		}
	}
	if err != nil {
		for _, m := range errLine.FindAllStringSubmatch(err.Error(), -1) {
			n, _ := strconv.Atoi(m[2])
			blame(n, m[4])
		}
		if len(bad) == 0 {
			for id := range lines {
				bad[id] = err.Error()
			}
		}
		return bad
	}
	base := p.m.importer()
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if path == p.pkg.ImportPath {
				return p.pkg.Types, nil
			}
			return base.Import(path)
		}),
		Error: func(err error) {
			if te, ok := err.(types.Error); ok {
				blame(te.Fset.Position(te.Pos).Line, te.Msg)
			}
		},
	}
	_, _ = conf.Check(p.pkg.ImportPath+"_test", fset, []*ast.File{f}, nil)
	return bad
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

var sharedImporter types.Importer

// importer reads export data of the packages go list listed (shared: each package is read once).
func (m *Module) importer() types.Importer {
	if sharedImporter == nil {
		sharedImporter = importer.ForCompiler(m.Fset, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exportFiles[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(file)
		})
	}
	return sharedImporter
}

var exportFiles = map[string]string{}

// build writes the harness into the package's folder and builds its test binary with -cover;
// candidates whose lines go still rejects are dropped and the build tried again.
func (p *Probe) build(cands []*Candidate) ([]*Candidate, string, error) {
	cands, src, lines := p.typeCheck(cands)
	harness := filepath.Join(p.pkg.AbsDir, p.fileName())
	defer os.Remove(harness)
	for attempt := 0; attempt < 4 && len(cands) > 0; attempt++ {
		if err := os.WriteFile(harness, []byte(src), 0o644); err != nil {
			return nil, "", err
		}
		p.builds++
		bin := filepath.Join(p.work, fmt.Sprintf("probe-%s-%d.test", sanitize(p.pkg.Dir), p.builds))
		_, stderr, err := goCmd(p.m.Req, 5*time.Minute, "test", "-c", "-cover", "-covermode=set",
			"-o", bin, "./"+p.pkg.Dir)
		if err == nil {
			return cands, bin, nil
		}
		bad := map[int]bool{}
		for _, m := range errLine.FindAllStringSubmatch(string(stderr), -1) {
			if !strings.HasSuffix(m[1], p.fileName()) {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			for _, c := range cands {
				if r := lines[c.ID]; n >= r[0] && n <= r[1] {
					bad[c.ID] = true
					p.drop(c, m[4])
				}
			}
		}
		if len(bad) == 0 {
			return nil, "", fmt.Errorf("the package's tests do not build with the probe: %s", tail(string(stderr), 600))
		}
		var kept []*Candidate
		for _, c := range cands {
			if !bad[c.ID] {
				kept = append(kept, c)
			}
		}
		cands = kept
		src, lines = p.render(cands)
	}
	return nil, "", fmt.Errorf("the probe did not build")
}

func sanitize(s string) string {
	if s == "" {
		return "root"
	}
	return strings.NewReplacer("/", "_", ".", "_").Replace(s)
}

// runOne runs one candidate in its own process, in an empty folder of its own (what it writes
// at a relative path shows there) with homes of its own.
func (p *Probe) runOne(bin string, id int) *Outcome {
	dir := filepath.Join(p.work, "run", strconv.Itoa(id))
	_ = os.RemoveAll(dir)
	home, tmp, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "tmp"), filepath.Join(dir, "cwd")
	for _, d := range []string{home, tmp, cwd} {
		_ = os.MkdirAll(d, 0o755)
	}
	profile := filepath.Join(dir, "cover.out")
	slashTmp := listing(os.TempDir())
	pattern := "^TestTTProbe" + strconv.Itoa(id) + "$"
	if id == 0 {
		pattern = "^$" // no candidate: what the package's own TestMain and init do
	}
	cmd := exec.Command(bin, "-test.run="+pattern,
		"-test.coverprofile="+profile, "-test.timeout="+p.timeout.String())
	cmd.Dir = cwd
	// Its own process group: a timeout kills whatever it started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A fixed time zone: the delivered tests run under two others, so a value that depends on
	// it is never asserted.
	cmd.Env = append(os.Environ(), "TZ=UTC", "HOME="+home, "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	o := &Outcome{ID: id}
	if err := cmd.Start(); err != nil {
		o.Stopped = err.Error()
		return o
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(p.timeout + time.Second):
		// go test's own -test.timeout did not stop it (math/big's assembly is not preempted).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		o.Stopped = "timed out"
	}
	o.Output = stdout.String()
	found := false
	sc := bufio.NewScanner(bytes.NewReader(stdout.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "TTOBS ") {
			if json.Unmarshal([]byte(line[6:]), o) == nil && o.ID == id {
				found = true
			}
		}
	}
	if !found && o.Stopped == "" && id != 0 {
		switch {
		case strings.Contains(o.Output, "panic: test timed out"):
			o.Stopped = "timed out"
		default:
			o.Stopped = "the test binary stopped: " + firstLine(lastLines(o.Output, 6))
		}
	}
	o.Blocks = map[string]Block{}
	o.Features = readProfile(profile, o.Blocks)
	o.Effects = append(o.Effects, leftIn(home, "$HOME", "")...)
	// t.TempDir's own folder outlives a run that was killed or crashed; it is the test's.
	o.Effects = append(o.Effects, leftIn(tmp, "$TMPDIR", "TestTTProbe")...)
	o.Effects = append(o.Effects, leftIn(cwd, "the working folder", "")...)
	o.Effects = append(o.Effects, changed(slashTmp, listing(os.TempDir()), os.TempDir())...)
	_ = os.RemoveAll(dir)
	return o
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// listing is a folder's entries with their sizes and times (what shows a write).
func listing(dir string) map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		out[e.Name()] = fmt.Sprintf("%d %d", info.Size(), info.ModTime().UnixNano())
	}
	return out
}

// changed names what appeared or changed between two listings.
func changed(before, after map[string]string, where string) []string {
	var out []string
	for name, stamp := range after {
		if strings.HasPrefix(name, "tt_probe_") || strings.HasSuffix(name, ".test") {
			continue
		}
		if old, ok := before[name]; !ok || old != stamp {
			out = append(out, filepath.Join(where, name))
		}
	}
	sort.Strings(out)
	return out
}

// leftIn names what a candidate left in a folder that was empty (but top-level entries named
// with the prefix ours, when it is not "").
func leftIn(dir, label, ours string) []string {
	var out []string
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if ours != "" && strings.HasPrefix(rel, ours) {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out = append(out, label+"/"+rel)
		return nil
	})
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}

// Block is one coverage block: file and range.
type Block struct {
	File  string
	Key   string
	Start int
	End   int
	Stmts int
}

// readProfile is the blocks a profile says ran; all (when not nil) gets every block.
func readProfile(path string, all map[string]Block) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ran []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		b, count, ok := parseBlock(sc.Text())
		if !ok {
			continue
		}
		if all != nil {
			all[b.Key] = b
		}
		if count > 0 {
			ran = append(ran, b.Key)
		}
	}
	return ran
}

// parseBlock reads `importpath/file.go:12.3,14.2 2 1`.
func parseBlock(line string) (Block, int, bool) {
	colon := strings.LastIndex(line, ":")
	if colon < 0 || strings.HasPrefix(line, "mode:") {
		return Block{}, 0, false
	}
	fields := strings.Fields(line[colon+1:])
	if len(fields) != 3 {
		return Block{}, 0, false
	}
	stmts, _ := strconv.Atoi(fields[1])
	count, _ := strconv.Atoi(fields[2])
	r := strings.Split(fields[0], ",")
	if len(r) != 2 {
		return Block{}, 0, false
	}
	start, _ := strconv.Atoi(strings.SplitN(r[0], ".", 2)[0])
	end, _ := strconv.Atoi(strings.SplitN(r[1], ".", 2)[0])
	return Block{File: line[:colon], Key: line[:colon] + ":" + fields[0], Start: start, End: end, Stmts: stmts}, count, true
}
