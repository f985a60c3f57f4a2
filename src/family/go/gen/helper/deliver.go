package main

// Delivery: the kept candidates become one test file per source file, which are built and run
// once more as go test runs them (twice, so a value that changes between runs is caught), with
// the defects and broken examples run on their own without their skips, where they must fail;
// go vet runs over them. A row or a test that fails any of it is dropped; what is left is what
// the generator delivers, with the line coverage its run measured.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Delivered is what the generator hands back.
type Delivered struct {
	modules  []GenModule
	findings []Finding
	stats    map[string]interface{}
}

func deliver(s *Search) *Delivered {
	d := &Delivered{stats: map[string]interface{}{}, findings: append([]Finding{}, s.findings...)}
	files := s.model()
	renderers := map[*Pkg]*Renderer{}
	for _, pkg := range s.m.Pkgs {
		renderers[pkg] = &Renderer{m: s.m, pkg: pkg, vals: s.values[pkg], work: s.req.Work}
	}
	dropped := 0
	profile := filepath.Join(s.req.Work, "deliver.cov")
	clean := false
	for attempt := 0; attempt < 8 && !clean; attempt++ {
		texts := map[*TestFile]string{}
		for _, tf := range files {
			if text := renderers[tf.Pkg].renderFile(tf, true); text != "" {
				texts[tf] = text
			}
		}
		writeFiles(s, files, texts)
		// Each check on files that passed the one before.
		n := s.checkPassing(files, texts, profile)
		if n == 0 {
			n = s.checkFailing(files, texts)
		}
		if n == 0 {
			n = s.vet(files, texts)
		}
		if debug {
			logf("check attempt %d dropped %d", attempt, n)
		}
		dropped += n
		clean = n == 0
	}
	if !clean {
		// Still failing after every attempt: nothing is delivered rather than a failing test.
		d.stats["check_failed"] = true
		for _, tf := range files {
			tf.Funcs = nil
		}
	}
	d.stats["dropped_by_check"] = dropped
	coverage := lineCoverage(profile, s.m.Path)
	for _, tf := range files {
		if os.Getenv("TTGEN_KEEP") == "" {
			os.Remove(filepath.Join(tf.Pkg.AbsDir, tf.Name))
		}
	}
	byFile := map[string]*TestFile{}
	for _, tf := range files {
		byFile[tf.Source] = tf
	}
	for _, ref := range s.req.Modules {
		gm := GenModule{Module: ref.Module, File: ref.File, TestFile: testFileName(s.req.Layer, ref.File), Tests: []string{}}
		tf := byFile[ref.File]
		if tf != nil {
			gm.TestFile = tf.Name
			gm.Source = renderers[tf.Pkg].renderFile(tf, false)
			gm.Tests = testNames(tf)
		}
		gm.Calls = s.callsFor(ref.File, tf)
		if c, ok := coverage[ref.File]; ok {
			gm.LinesTotal, gm.LinesCovered = c[0], c[1]
		}
		d.modules = append(d.modules, gm)
	}
	delivered := map[string]bool{}
	for _, tf := range files {
		for _, f := range tf.Funcs {
			delivered[f.Name] = true
			switch {
			case f.Defect != nil:
				test := f.Name
				actual := "panic: " + f.Defect.O.Panic_()
				expected := "no panic: the doc comment does not say it panics"
				d.findings = append(d.findings, Finding{Module: moduleOf(tf.Source),
					Function: f.Defect.fn().Pkg.Alias + "." + f.Defect.fn().Name, Kind: "panic",
					Call: f.Defect.Call, Expected: &expected, Actual: &actual, Test: &test})
			}
		}
	}
	for _, ex := range s.examples {
		want, got := ex.Want, ex.Got
		var test *string
		name := "Test" + ex.Example.Name
		if delivered[name] {
			test = &name
		}
		module := moduleOf(ex.Example.File)
		if source := s.sourceOf(ex); source != "" {
			module = moduleOf(source)
		}
		d.findings = append(d.findings, Finding{Module: module, Function: ex.Function,
			Kind: "doc_example", Call: ex.Example.Name + "()", Expected: &want, Actual: &got, Test: test})
	}
	return d
}

// Panic_ is the panic's message ("" when it did not panic).
func (o *Outcome) Panic_() string {
	if o.Panic == nil {
		return ""
	}
	return *o.Panic
}

func (d *Defect) fn() *Callable { return d.C.Steps[min(d.O.Step, len(d.C.Steps)-1)].C }

// testFileName is a source file's generated test file: stats/mean.go -> mean_tt_test.go; a
// file of one system keeps its suffix last, where go reads it: poll_linux.go ->
// poll_tt_linux_test.go.
func testFileName(layer, file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".go")
	suffix := ""
	parts := strings.Split(base, "_")
	for n := 2; n >= 1; n-- {
		if len(parts) > n && platformSuffix(parts[len(parts)-n:]) {
			base, suffix = strings.Join(parts[:len(parts)-n], "_"), "_"+strings.Join(parts[len(parts)-n:], "_")
			break
		}
	}
	if strings.HasPrefix(layer, "L2") {
		return base + "_tt_integration" + suffix + "_test.go"
	}
	return base + "_tt" + suffix + "_test.go"
}

var goos = "aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos"
var goarch = "386 amd64 arm arm64 loong64 mips mipsle mips64 mips64le ppc64 ppc64le riscv64 s390x wasm"

// platformSuffix says whether a file name ends with _GOOS, _GOARCH or _GOOS_GOARCH.
func platformSuffix(parts []string) bool {
	known := func(list, w string) bool {
		for _, x := range strings.Fields(list) {
			if x == w {
				return true
			}
		}
		return false
	}
	if len(parts) == 2 {
		return known(goos, parts[0]) && known(goarch, parts[1])
	}
	return known(goos, parts[0]) || known(goarch, parts[0])
}

// model groups the kept candidates, defects and broken examples into files and functions.
func (s *Search) model() []*TestFile {
	var files []*TestFile
	byFile := map[string]*TestFile{}
	fileOf := func(pkg *Pkg, source string) *TestFile {
		if tf, ok := byFile[source]; ok {
			return tf
		}
		tf := &TestFile{Pkg: pkg, Source: source, Name: testFileName(s.req.Layer, source)}
		byFile[source] = tf
		files = append(files, tf)
		return tf
	}
	used := map[*Pkg]map[string]bool{}
	name := func(pkg *Pkg, base string) string {
		if used[pkg] == nil {
			used[pkg] = map[string]bool{}
		}
		n := base
		if pkg.Existing[n] {
			n = base + "_Generated"
		}
		for i := 2; used[pkg][n] || pkg.Existing[n]; i++ {
			n = fmt.Sprintf("%s_Generated%d", base, i)
		}
		used[pkg][n] = true
		return n
	}
	funcs := map[string]*TestFunc{}
	rowsUsed := map[*TestFunc]map[string]bool{}
	for _, k := range s.sortedKept() {
		first := k.C.Steps[0].C
		key, kind, base := "", "table", ""
		tf := fileOf(first.Pkg, first.File)
		if s.l2 {
			typ := first.Recv
			key = "seq|" + typ.Obj().Name()
			kind, base = "sequences", "Test"+typ.Obj().Name()+"_Sequences"
			if pos := s.m.Fset.Position(typ.Obj().Pos()); pos.Filename != "" {
				if rel, err := filepath.Rel(s.m.Root, pos.Filename); err == nil {
					if _, ours := first.Pkg.Files[filepath.ToSlash(rel)]; ours && s.wanted(filepath.ToSlash(rel)) {
						tf = fileOf(first.Pkg, filepath.ToSlash(rel))
					}
				}
			}
		} else {
			key = "fn|" + first.Pkg.ImportPath + "|" + first.Name
			base = "Test" + strings.ReplaceAll(first.Name, ".", "_")
		}
		f := funcs[key]
		if f == nil {
			f = &TestFunc{Name: name(first.Pkg, base), Kind: kind, C: first, Type: first.Recv}
			funcs[key] = f
			rowsUsed[f] = map[string]bool{}
			tf.Funcs = append(tf.Funcs, f)
		}
		f.Rows = append(f.Rows, &Row{Name: rowName(k, rowsUsed[f]), K: k})
	}
	for _, d := range s.defects {
		fn := d.fn()
		tf := fileOf(fn.Pkg, fn.File)
		// L2's defects are found in sequences: their names differ from L1's, whose file sits
		// beside theirs once both are applied.
		suffix := "_CodeDefect"
		if s.l2 {
			suffix = "_SequenceCodeDefect"
		}
		tf.Funcs = append(tf.Funcs, &TestFunc{Name: name(fn.Pkg, "Test"+strings.ReplaceAll(fn.Name, ".", "_")+suffix),
			Kind: "defect", Defect: d})
	}
	for _, ex := range s.examples {
		source := s.sourceOf(ex)
		if source == "" {
			continue
		}
		tf := fileOf(ex.Pkg, source)
		tf.Funcs = append(tf.Funcs, &TestFunc{Name: name(ex.Pkg, "Test"+ex.Example.Name), Kind: "example", Example: ex})
	}
	// Two packages' files of one name get their folder in front.
	names := map[string]int{}
	for _, tf := range files {
		names[tf.Name]++
	}
	for _, tf := range files {
		if names[tf.Name] > 1 && tf.Pkg.Dir != "" {
			tf.Name = sanitize(tf.Pkg.Dir) + "_" + tf.Name
		}
		sortFuncs(tf.Funcs)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Source < files[j].Source })
	return files
}

func (s *Search) wanted(file string) bool {
	for _, r := range s.req.Modules {
		if r.File == file {
			return true
		}
	}
	return false
}

// sourceOf is the source file whose tests hold an example's test: the documented function's
// file, else the package's first file among those asked for.
func (s *Search) sourceOf(ex *ExampleFailure) string {
	for _, c := range s.m.Callables {
		if c.Pkg == ex.Pkg && c.Pkg.Alias+"."+c.Name == ex.Function {
			return c.File
		}
	}
	for _, r := range s.req.Modules {
		if _, ok := ex.Pkg.Files[r.File]; ok {
			return r.File
		}
	}
	return ""
}

func writeFiles(s *Search, files []*TestFile, texts map[*TestFile]string) {
	for _, tf := range files {
		path := filepath.Join(tf.Pkg.AbsDir, tf.Name)
		if text, ok := texts[tf]; ok {
			_ = os.WriteFile(path, []byte(text), 0o644)
		} else {
			os.Remove(path)
		}
	}
}

// names of the tests a file holds: the tables' and sequences' cases, the defects and examples.
func testNames(tf *TestFile) []string {
	out := []string{}
	for _, f := range tf.Funcs {
		if f.Kind == "table" || f.Kind == "sequences" {
			for _, r := range f.Rows {
				out = append(out, f.Name+"/"+r.Name)
			}
			continue
		}
		out = append(out, f.Name)
	}
	return out
}

func pkgArgs(files []*TestFile, texts map[*TestFile]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, tf := range files {
		if _, ok := texts[tf]; ok && !seen[tf.Pkg.Dir] {
			seen[tf.Pkg.Dir] = true
			out = append(out, "./"+tf.Pkg.Dir)
		}
	}
	sort.Strings(out)
	return out
}

// checkPassing runs the tables and sequences twice; it drops what fails and returns how many.
func (s *Search) checkPassing(files []*TestFile, texts map[*TestFile]string, profile string) int {
	var names []string
	for _, tf := range files {
		if _, ok := texts[tf]; !ok {
			continue
		}
		for _, f := range tf.Funcs {
			if f.Kind == "table" || f.Kind == "sequences" {
				names = append(names, f.Name)
			}
		}
	}
	os.Remove(profile)
	if len(names) == 0 {
		return 0
	}
	// Twice: as go test ./... runs them (after the package's own tests, which may change
	// what the package holds) in UTC, then on their own in another time zone, with homes
	// and a temporary folder of their own that must stay empty. Coverage is the second
	// run's: the generated tests' own.
	pkgs := pkgArgs(files, texts)
	all := append([]string{"test", "-json", "-count=1"}, pkgs...)
	out, stderr, _ := goCmdEnv(s.req, 5*time.Minute, []string{"TZ=UTC"}, all...)
	if n := s.dropBuildErrors(files, texts, string(stderr)+string(out)); n > 0 {
		return n
	}
	home, tmp := filepath.Join(s.req.Work, "check-home"), filepath.Join(s.req.Work, "check-tmp")
	for _, d := range []string{home, tmp} {
		_ = os.RemoveAll(d)
		_ = os.MkdirAll(d, 0o755)
	}
	ours := append([]string{"test", "-json", "-count=1", "-cover", "-coverprofile=" + profile,
		"-run", "^(" + strings.Join(names, "|") + ")$"}, pkgs...)
	out2, stderr2, _ := goCmdEnv(s.req, 5*time.Minute, []string{"TZ=Asia/Kathmandu", "HOME=" + home, "TMPDIR=" + tmp}, ours...)
	if debug {
		logf("check run %v: %s", ours, tail(string(stderr2)+string(out2), 300))
	}
	if n := s.dropBuildErrors(files, texts, string(stderr2)+string(out2)); n > 0 {
		return n
	}
	if left := append(leftIn(home, "$HOME", ""), leftIn(tmp, "$TMPDIR", "Test")...); len(left) > 0 {
		// Every call ran clean alone; together they did not: nothing is delivered.
		s.stats["check_effects"] = left
		logf("the generated tests together changed %v: nothing is delivered", left)
		for _, tf := range files {
			tf.Funcs = nil
		}
		return 1
	}
	results := events(out)
	for key, st := range events(out2) {
		if st != "pass" && st != "skip" {
			results[key] = st
		} else if _, seen := results[key]; !seen {
			results[key] = st
		}
	}
	drop := 0
	for _, tf := range files {
		for _, f := range tf.Funcs {
			if f.Kind != "table" && f.Kind != "sequences" {
				continue
			}
			key := tf.Pkg.ImportPath + "\x00" + f.Name
			var rows []*Row
			rowFailed := false
			for _, r := range f.Rows {
				if st := results[key+"/"+r.Name]; st == "fail" || st == "unfinished" {
					drop++
					rowFailed = true
					continue
				}
				rows = append(rows, r)
			}
			f.Rows = rows
			if st := results[key]; (st == "fail" || st == "unfinished") && !rowFailed {
				f.Rows = nil
				drop++
			}
		}
	}
	return drop
}

// checkFailing runs each defect and broken example on its own: it must fail.
func (s *Search) checkFailing(files []*TestFile, texts map[*TestFile]string) int {
	drop := 0
	for _, tf := range files {
		if _, ok := texts[tf]; !ok {
			continue
		}
		var kept []*TestFunc
		for _, f := range tf.Funcs {
			if f.Kind == "defect" || f.Kind == "example" {
				out, _, _ := goCmd(s.req, 2*time.Minute, "test", "-json", "-count=1", "-run", "^"+f.Name+"$", "./"+tf.Pkg.Dir)
				if st := events(out)[tf.Pkg.ImportPath+"\x00"+f.Name]; st != "fail" && st != "unfinished" {
					if debug {
						logf("%s did not fail (%s): %s", f.Name, st, tail(string(out), 400))
					}
					drop++
					continue
				}
			}
			kept = append(kept, f)
		}
		tf.Funcs = kept
	}
	return drop
}

// vet runs go vet over the packages; a function it complains about is dropped.
func (s *Search) vet(files []*TestFile, texts map[*TestFile]string) int {
	args := pkgArgs(files, texts)
	if len(args) == 0 {
		return 0
	}
	out, stderr, _ := goCmd(s.req, 5*time.Minute, append([]string{"vet"}, args...)...)
	return s.dropBuildErrors(files, texts, string(stderr)+string(out))
}

var goErr = regexp.MustCompile(`(?m)([^\s:]+\.go):(\d+):(\d+): (.*)$`)

// dropBuildErrors drops the functions (or rows) go's messages point at in the generated files.
func (s *Search) dropBuildErrors(files []*TestFile, texts map[*TestFile]string, output string) int {
	drop := 0
	for _, tf := range files {
		text, ok := texts[tf]
		if !ok {
			continue
		}
		places := locate(text)
		bad := map[Place]bool{}
		for _, m := range goErr.FindAllStringSubmatch(output, -1) {
			if filepath.Base(m[1]) != tf.Name {
				continue
			}
			line, _ := strconv.Atoi(m[2])
			if p, ok := places[line]; ok {
				bad[p] = true
			} else {
				bad[Place{Func: "*"}] = true
			}
		}
		if len(bad) == 0 {
			continue
		}
		if debug {
			logf("%s: go says %v: %s", tf.Name, bad, tail(output, 600))
		}
		var kept []*TestFunc
		for _, f := range tf.Funcs {
			if bad[Place{Func: f.Name}] || bad[Place{Func: "*"}] {
				drop++
				continue
			}
			var rows []*Row
			for _, r := range f.Rows {
				if bad[Place{Func: f.Name, Row: r.Name}] {
					drop++
					continue
				}
				rows = append(rows, r)
			}
			f.Rows = rows
			kept = append(kept, f)
		}
		tf.Funcs = kept
	}
	return drop
}

// events folds go test -json into each test's end: "pass", "fail", "skip", or "unfinished"
// (it started and the binary died first), keyed by package and test name.
func events(out []byte) map[string]string {
	status := map[string]string{}
	eachEvent(out, func(e testEvent) {
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "run":
			if _, seen := status[key]; !seen {
				status[key] = "unfinished"
			}
		case "pass", "skip":
			if status[key] != "fail" {
				status[key] = e.Action
			}
		case "fail":
			status[key] = "fail"
		}
	})
	return status
}

// lineCoverage is each module-relative file's lines with statements and those that ran.
func lineCoverage(profile, module string) map[string][2]int {
	lines := map[string]map[int]bool{}
	f, err := os.Open(profile)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		b, count, ok := parseBlock(sc.Text())
		if !ok || b.Stmts == 0 {
			continue
		}
		file := strings.TrimPrefix(strings.TrimPrefix(b.File, module), "/")
		if lines[file] == nil {
			lines[file] = map[int]bool{}
		}
		for l := b.Start; l <= b.End; l++ {
			lines[file][l] = lines[file][l] || count > 0
		}
	}
	out := map[string][2]int{}
	for file, ls := range lines {
		covered := 0
		for _, ran := range ls {
			if ran {
				covered++
			}
		}
		out[file] = [2]int{len(ls), covered}
	}
	return out
}
