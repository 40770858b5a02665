from semgraph.cli import main

main()
