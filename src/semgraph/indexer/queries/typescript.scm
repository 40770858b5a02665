; semgraph extraction query for TypeScript and TSX.
; Captures: @definition.<kind> + @name; @export; @scope.namespace + @name; @import;
; @call + @callee (+ @receiver).

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
(internal_module name: (_) @name) @scope.namespace

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
; `await f<T>()` reads as a call of `await f` (tree-sitter-typescript): the call of f
(call_expression function: (await_expression (identifier) @callee)) @call
(call_expression
  function: (await_expression (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @callee))) @call

; typed names (indexer/typed.py): locals, fields, parameters, `this.x = new T()`, returns
(variable_declarator name: (identifier) @bind.name type: (type_annotation (_) @bind.type)) @bind
(variable_declarator name: (identifier) @bind.name value: (new_expression constructor: (_) @bind.call)) @bind
(variable_declarator name: (identifier) @bind.name value: (call_expression function: (_) @bind.call)) @bind
(variable_declarator name: (identifier) @bind.name
  value: (await_expression (call_expression function: (_) @bind.call))) @bind
(variable_declarator name: (identifier) @bind.name) @bind
(required_parameter pattern: (identifier) @bind.name type: (type_annotation (_) @bind.type)) @bind
(optional_parameter pattern: (identifier) @bind.name type: (type_annotation (_) @bind.type)) @bind
(required_parameter pattern: (identifier) @bind.name) @bind
(public_field_definition name: (property_identifier) @bind.name
  type: (type_annotation (_) @bind.type)) @bind
(public_field_definition name: (property_identifier) @bind.name
  value: (new_expression constructor: (_) @bind.call)) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (new_expression constructor: (_) @bind.call)) @bind
(function_declaration return_type: (type_annotation (_) @bind.type)) @returns
(method_definition return_type: (type_annotation (_) @bind.type)) @returns
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (identifier) @bind.ref) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (call_expression function: (_) @bind.call)) @bind
(assignment_expression
  left: (member_expression object: (this) @bind.self property: (property_identifier) @bind.name)
  right: (await_expression (call_expression function: (_) @bind.call))) @bind
; a constructor's parameter property (constructor(private h: Headers)) is a field
(required_parameter (accessibility_modifier) @bind.self pattern: (identifier) @bind.name
  type: (type_annotation (_) @bind.type)) @bind
(optional_parameter (accessibility_modifier) @bind.self pattern: (identifier) @bind.name
  type: (type_annotation (_) @bind.type)) @bind
; what a function returns (a callback's own return is not its enclosing function's: typed.py)
(return_statement (new_expression constructor: (_) @bind.call)) @returns
(return_statement (call_expression function: (_) @bind.call)) @returns
(return_statement (this) @bind.value) @returns
(return_statement (identifier) @bind.ref) @returns
; destructured and single parameters (([a, b]) => ..., ({a}) => ..., a => ...): untyped locals
(required_parameter pattern: (array_pattern (identifier) @bind.name)) @bind
(required_parameter pattern: (object_pattern (shorthand_property_identifier_pattern) @bind.name)) @bind
(arrow_function parameter: (identifier) @bind.name) @bind
