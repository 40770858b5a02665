; semgraph extraction query for Python.
; Captures: @definition.<kind> + @name; @import; @call + @callee (+ @receiver).
; A function whose nearest enclosing symbol is a class becomes a method.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

(import_statement) @import
(import_from_statement) @import
(future_import_statement) @import

(call function: (identifier) @callee) @call
(call function: (attribute object: (_) @receiver attribute: (identifier) @callee)) @call
