// Command go_calls is the Go oracle of bench_crossrepo_go: it loads every package of the
// module in the directory it is given (tests included) with the Go type checker
// (golang.org/x/tools/go/packages, go/types) and prints, as JSON lines, every call whose
// callee is a function or method declared in another module: where the call is (file, line)
// and where the callee is declared (file, line, package path, name).
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"

	"golang.org/x/tools/go/packages"
)

type call struct {
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Package    string `json:"package"`
	Name       string `json:"name"`
	Receiver   string `json:"receiver"`
	TargetFile string `json:"target_file"`
	TargetLine int    `json:"target_line"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go_calls DIR")
		os.Exit(2)
	}
	dir, err := filepath.Abs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mode := packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
		packages.NeedTypesInfo | packages.NeedModule
	pkgs, err := packages.Load(&packages.Config{Mode: mode, Tests: true, Dir: dir}, "./...")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	seen := map[call]bool{}
	for _, p := range pkgs {
		if p.Module == nil || p.TypesInfo == nil {
			continue
		}
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var id *ast.Ident
				switch fn := ast.Unparen(c.Fun).(type) {
				case *ast.Ident:
					id = fn
				case *ast.SelectorExpr:
					id = fn.Sel
				}
				if id == nil {
					return true
				}
				fn, ok := p.TypesInfo.Uses[id].(*types.Func)
				if !ok || fn.Pkg() == nil {
					return true
				}
				decl := p.Fset.Position(fn.Pos())
				if decl.Filename == "" || within(decl.Filename, p.Module.Dir) {
					return true // the module's own, or the standard library's (no file)
				}
				at := p.Fset.Position(c.Pos())
				rel, err := filepath.Rel(p.Module.Dir, at.Filename)
				if err != nil {
					return true
				}
				recv := ""
				if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
					recv = types.TypeString(sig.Recv().Type(), nil)
				}
				row := call{rel, at.Line, fn.Pkg().Path(), fn.Name(), recv, decl.Filename, decl.Line}
				if !seen[row] {
					seen[row] = true
					_ = out.Encode(row)
				}
				return true
			})
		}
	}
}

func within(file, dir string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}
