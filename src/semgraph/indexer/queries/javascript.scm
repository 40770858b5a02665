; semgraph extraction query for JavaScript (and JSX).
; Captures: @definition.<kind> + @name; @export; @import; @call + @callee (+ @receiver).

(class_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(import_statement) @import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string) .)
  (#eq? @_require "require")) @import
(export_statement source: (_)) @import

; exports a bare name lookup does not find (indexer/imports.py js_exports)
(export_statement) @export
(expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
  (#eq? @_module "module") (#eq? @_exports "exports")) @export)
(expression_statement (assignment_expression
  right: (assignment_expression
    left: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
    (#eq? @_module "module") (#eq? @_exports "exports")) @export))

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @callee)) @call
(new_expression constructor: (identifier) @callee) @call

; typed names (indexer/typed.py): locals from `new` and calls, `this.x = new T()`, parameters
(variable_declarator name: (identifier) @bind.name value: (new_expression constructor: (_) @bind.call)) @bind
(variable_declarator name: (identifier) @bind.name value: (call_expression function: (_) @bind.call)) @bind
(variable_declarator name: (identifier) @bind.name
  value: (await_expression (call_expression function: (_) @bind.call))) @bind
(variable_declarator name: (identifier) @bind.name) @bind
(formal_parameters (identifier) @bind.name) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (new_expression constructor: (_) @bind.call)) @bind
(field_definition property: (property_identifier) @bind.name
  value: (new_expression constructor: (_) @bind.call)) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (identifier) @bind.ref) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (call_expression function: (_) @bind.call)) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (await_expression (call_expression function: (_) @bind.call))) @bind
; JSDoc types (indexer/jsdoc.py): a /** */ comment and the declaration right after it
((comment) @jsdoc .
  [(function_declaration) (generator_function_declaration) (method_definition)
   (lexical_declaration) (variable_declaration) (export_statement)
   (expression_statement)] @jsdoc.target)
; what a function returns (a callback's own return is not its enclosing function's: typed.py)
(return_statement (new_expression constructor: (_) @bind.call)) @returns
(return_statement (call_expression function: (_) @bind.call)) @returns
(return_statement (this) @bind.value) @returns
(return_statement (identifier) @bind.ref) @returns
; destructured and single parameters (([a, b]) => ..., ({a}) => ..., a => ...): untyped locals
(formal_parameters (array_pattern (identifier) @bind.name)) @bind
(formal_parameters (object_pattern (shorthand_property_identifier_pattern) @bind.name)) @bind
(arrow_function parameter: (identifier) @bind.name) @bind
