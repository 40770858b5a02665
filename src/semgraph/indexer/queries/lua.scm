; semgraph extraction query for Lua.
; Captures: @definition.<kind> + @name (+ @owner: the table of ``function M.f`` /
; ``function M:m``); @import (require); @call + @callee (+ @receiver).

(function_declaration name: (identifier) @name) @definition.function
(function_declaration
  name: (dot_index_expression table: _ @owner field: (identifier) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: _ @owner method: (identifier) @name)) @definition.method
(assignment_statement
  (variable_list . name: (identifier) @name)
  (expression_list . value: (function_definition))) @definition.function

(function_call
  name: (identifier) @_require
  arguments: [(arguments . (string) .) (string)]
  (#eq? @_require "require")) @import

(function_call
  name: (identifier) @callee
  (#not-eq? @callee "require")) @call
(function_call
  name: (dot_index_expression table: _ @receiver field: (identifier) @callee)) @call
(function_call
  name: (method_index_expression table: _ @receiver method: (identifier) @callee)) @call
