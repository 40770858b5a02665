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

; typed names (indexer/typed.py): locals, with-targets, parameters, self attributes, returns
(assignment left: (identifier) @bind.name type: (type) @bind.type) @bind
(assignment left: (identifier) @bind.name right: (call function: (_) @bind.call)) @bind
(assignment left: (identifier) @bind.name right: (identifier) @bind.ref) @bind
(assignment left: (identifier) @bind.name) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)
  type: (type) @bind.type) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)
  right: (call function: (_) @bind.call)) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)
  right: (identifier) @bind.ref) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)) @bind
(as_pattern (call function: (_) @bind.call) alias: (as_pattern_target (identifier) @bind.name)) @bind
(as_pattern alias: (as_pattern_target (identifier) @bind.name)) @bind
(for_statement left: (identifier) @bind.name) @bind
(for_statement left: (identifier) @bind.name right: (_) @bind.elem) @bind
(typed_parameter (identifier) @bind.name type: (type) @bind.type) @bind
(typed_default_parameter name: (identifier) @bind.name type: (type) @bind.type) @bind
(parameters (identifier) @bind.name) @bind
(default_parameter name: (identifier) @bind.name) @bind
(list_splat_pattern (identifier) @bind.name) @bind
(dictionary_splat_pattern (identifier) @bind.name) @bind
(function_definition return_type: (type) @bind.type) @returns
(return_statement (call function: (_) @bind.call)) @returns
(return_statement (identifier) @bind.ref) @returns
(yield (call function: (_) @bind.call)) @returns
(yield (identifier) @bind.ref) @returns
; a decorated function's outermost decorator (resolve/decorators.py: what it makes of it)
(decorated_definition . (decorator [(identifier) (attribute) (call)] @bind.value)
  definition: (function_definition) @decorated)
(for_statement left: (pattern_list (identifier) @bind.name)) @bind
(for_statement left: (pattern_list (identifier) @bind.name) right: (_) @bind.elem) @bind
(for_statement left: (tuple_pattern (identifier) @bind.name) right: (_) @bind.elem) @bind
(for_in_clause left: (pattern_list (identifier) @bind.name) right: (_) @bind.elem) @bind
(for_statement left: (tuple_pattern (identifier) @bind.name)) @bind
(for_in_clause left: (identifier) @bind.name) @bind
(for_in_clause left: (identifier) @bind.name right: (_) @bind.elem) @bind
(for_in_clause left: (pattern_list (identifier) @bind.name)) @bind
(for_in_clause left: (tuple_pattern (identifier) @bind.name)) @bind
(assignment left: (pattern_list (identifier) @bind.name)) @bind
(assignment left: (pattern_list (identifier) @bind.name) right: (_) @bind.part) @bind
(assignment left: (identifier) @bind.name
  right: (call function: (_) @_cast arguments: (argument_list . (_) @bind.type))
  (#match? @_cast "^((typing|t)\\.)?cast$")) @bind
(lambda_parameters (identifier) @bind.name) @bind
(named_expression name: (identifier) @bind.name value: (call function: (_) @bind.call)) @bind
(named_expression name: (identifier) @bind.name) @bind
(global_statement (identifier) @bind.name) @bind
(for_statement left: (pattern_list (tuple_pattern (identifier) @bind.name))) @bind

(for_in_clause left: (pattern_list (tuple_pattern (identifier) @bind.name))) @bind
(as_pattern alias: (as_pattern_target (tuple (identifier) @bind.name))) @bind
(as_pattern alias: (as_pattern_target (list (identifier) @bind.name))) @bind
(assignment left: (identifier) @bind.name
  right: (boolean_operator left: (identifier) @bind.ref)) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)
  right: (boolean_operator left: (identifier) @bind.ref)) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)
  right: (boolean_operator right: (call function: (_) @bind.call))) @bind
(except_clause value: (as_pattern [(identifier) (attribute)] @bind.type
  alias: (as_pattern_target (identifier) @bind.name)) @bind)
(assignment left: (identifier) @bind.name
  right: (conditional_expression . (call function: (_) @bind.call))) @bind
; x if x is not None else default(): the value of x (as `x or default()` above)
(assignment left: (identifier) @bind.name
  right: (conditional_expression . (identifier) @bind.ref
    . (comparison_operator . (identifier) @_tested "is not" (none) .))
  (#eq? @bind.ref @_tested)) @bind
(assignment left: (attribute object: (identifier) @bind.self attribute: (identifier) @bind.name)
  right: (conditional_expression . (identifier) @bind.ref
    . (comparison_operator . (identifier) @_tested "is not" (none) .))
  (#eq? @bind.ref @_tested)) @bind
