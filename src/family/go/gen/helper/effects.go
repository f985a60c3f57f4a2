package main

// Which functions reach outside their arguments, read from the code: a function that starts
// processes, touches the network, changes the environment or exits is never called; one that
// writes files is called only when it takes a path, which its tests point into their temporary
// folder. What this misses (a call through an interface) the run itself catches: every
// candidate runs with homes of its own that must stay empty, in a sandbox.

import (
	"go/ast"
	"go/types"
)

type effect int

const (
	effectNone effect = iota
	effectFiles
	effectHard
)

// Packages any use of which reaches outside the process.
var hardPackages = map[string]bool{
	"os/exec": true, "net": true, "net/http": true, "net/rpc": true, "net/smtp": true,
	"syscall": true, "os/signal": true, "plugin": true, "os/user": true,
}

var hardCalls = map[string]bool{
	"os.Exit": true, "os.Setenv": true, "os.Unsetenv": true, "os.Clearenv": true,
	"os.Chdir": true, "os.StartProcess": true, "os.Pipe": true, "os.Stdin": true,
	"log.Fatal": true, "log.Fatalf": true, "log.Fatalln": true, "runtime.Goexit": true,
	"(*log.Logger).Fatal": true, "(*log.Logger).Fatalf": true, "(*log.Logger).Fatalln": true,
	"time.Sleep": true, "os.FindProcess": true, "(*os.Process).Kill": true,
	"(*os.Process).Signal": true, "(*os.Process).Wait": true,
}

var fileCalls = map[string]bool{
	"os.Create": true, "os.CreateTemp": true, "os.WriteFile": true, "os.OpenFile": true,
	"os.Remove": true, "os.RemoveAll": true, "os.Rename": true, "os.Mkdir": true,
	"os.MkdirAll": true, "os.MkdirTemp": true, "os.Chmod": true, "os.Chown": true,
	"os.Lchown": true, "os.Chtimes": true, "os.Symlink": true, "os.Link": true,
	"os.Truncate": true, "io/ioutil.WriteFile": true, "io/ioutil.TempFile": true,
	"io/ioutil.TempDir": true,
}

// importsEffect is the most a function of a package with these imports may do.
func importsEffect(imports []string) effect {
	most := effectNone
	for _, i := range imports {
		switch {
		case hardPackages[i]:
			return effectHard
		case i == "os" || i == "io/ioutil":
			most = effectFiles
		}
	}
	return most
}

// fileEffects is the effect of every function and method of the package, through the calls
// its own functions make to each other.
func fileEffects(pkg *Pkg) map[types.Object]effect {
	own := map[types.Object]effect{}
	calls := map[types.Object][]types.Object{}
	for _, f := range pkg.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn := pkg.Info.Defs[fd.Name]
			if fn == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				obj := pkg.Info.Uses[id]
				if obj == nil || obj.Pkg() == nil {
					return true
				}
				if obj.Pkg() == pkg.Types {
					if _, isFunc := obj.(*types.Func); isFunc {
						calls[fn] = append(calls[fn], obj)
					}
					return true
				}
				name := obj.Pkg().Path() + "." + obj.Name()
				if f, ok := obj.(*types.Func); ok {
					name = f.FullName()
				}
				// A function of another package of the module or of a dependency: its body
				// is not read here, so what its package imports says what it may do.
				if imports, foreign := foreignImports[obj.Pkg().Path()]; foreign {
					if _, isFunc := obj.(*types.Func); isFunc {
						if e := importsEffect(imports); e > own[fn] {
							own[fn] = e
						}
					}
					return true
				}
				switch {
				case hardPackages[obj.Pkg().Path()] || hardCalls[name]:
					own[fn] = effectHard
				case fileCalls[name] && own[fn] < effectFiles:
					own[fn] = effectFiles
				}
				return true
			})
		}
	}
	// Through the package's own calls, until nothing changes.
	for changed := true; changed; {
		changed = false
		for fn, callees := range calls {
			for _, c := range callees {
				if own[c] > own[fn] {
					own[fn] = own[c]
					changed = true
				}
			}
		}
	}
	return own
}
