; semgraph extraction query for Bash (and sh).
; Captures: @definition.function + @name; @import (source / .); @call + @callee: every
; command (a function of the script, a builtin or a program on the PATH).

(function_definition name: (word) @name) @definition.function

(command
  name: (command_name (word) @_source)
  argument: _
  (#match? @_source "^(source|\\.)$")) @import

(command
  name: (command_name (word) @callee)
  (#not-eq? @callee "source")
  (#not-eq? @callee ".")) @call
