"""Call-edge accuracy against compiler-grade oracles: within one repository (jedi, Go's
callgraph) and across repositories (jedi, TypeScript, javac, Ruby, go/types)."""
