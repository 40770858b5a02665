; semgraph extraction query for Go.
; Captures: @definition.<kind> + @name (+ @owner: a method's receiver type); @import;
; @call + @callee (+ @receiver).

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @owner
             (pointer_type (type_identifier) @owner)
             (generic_type type: (type_identifier) @owner)
             (pointer_type (generic_type type: (type_identifier) @owner))]))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
; a defined type over another type (`type Attr int32`, `type Events map[EventType]any`): it has
; methods of its own
(type_spec
  name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (pointer_type) (generic_type) (slice_type)
         (array_type) (map_type) (function_type) (channel_type)]) @definition.type

(import_spec) @import

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @callee)) @call

; typed names (semgraph.indexer.typed): locals from constructors, composite literals
; and function values, declared variables, parameters and method receivers, struct fields,
; declared results (the first one), and an interface's methods (untyped names in its scope:
; its method set, for interface dispatch)
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list . (call_expression function: (_) @bind.call))) @bind
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list . (composite_literal type: (_) @bind.type))) @bind
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list . (unary_expression operand: (composite_literal type: (_) @bind.type)))) @bind
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list . [(identifier) (selector_expression)] @bind.value)) @bind
(short_var_declaration left: (expression_list (identifier) @bind.name)) @bind
; x := new(T): a *T, as the type says
(short_var_declaration
  left: (expression_list . (identifier) @bind.name)
  right: (expression_list . (call_expression
    function: (identifier) @_new
    arguments: (argument_list . (_) @bind.type .)))
  (#eq? @_new "new")) @bind
(var_spec
  name: (identifier) @bind.name
  value: (expression_list . (call_expression
    function: (identifier) @_new
    arguments: (argument_list . (_) @bind.type .)))
  (#eq? @_new "new")) @bind
(var_spec name: (identifier) @bind.name type: (_) @bind.type) @bind
(var_spec
  name: (identifier) @bind.name
  value: (expression_list . (call_expression function: (_) @bind.call))) @bind
(var_spec
  name: (identifier) @bind.name
  value: (expression_list . (composite_literal type: (_) @bind.type))) @bind
(var_spec
  name: (identifier) @bind.name
  value: (expression_list . (unary_expression operand: (composite_literal type: (_) @bind.type)))) @bind
(var_spec
  name: (identifier) @bind.name
  value: (expression_list . [(identifier) (selector_expression)] @bind.value)) @bind
(var_spec name: (identifier) @bind.name) @bind
(parameter_declaration name: (identifier) @bind.name type: (_) @bind.type) @bind
(variadic_parameter_declaration name: (identifier) @bind.name) @bind
(range_clause left: (expression_list (identifier) @bind.name)) @bind
(range_clause
  left: (expression_list . (identifier) . (identifier) @bind.name .)
  right: [(identifier) (selector_expression)] @bind.elem) @bind
(type_switch_statement alias: (expression_list (identifier) @bind.name)) @bind
; a function literal: its parameters and locals are names of the literal only
(func_literal) @bind.scope
; fields of a declared struct type only (an anonymous struct's fields are no names of the code
; around it); an embedded field is named by its type (`base`, `*base`, `pkg.Base`): its methods
; are promoted
(type_spec type: (struct_type (field_declaration_list
  (field_declaration name: (field_identifier) @bind.name type: (_) @bind.type) @bind)))
(type_spec type: (struct_type (field_declaration_list
  (field_declaration !name type: (type_identifier) @bind.name @bind.type) @bind)))
(type_spec type: (struct_type (field_declaration_list
  (field_declaration !name type: (qualified_type name: (type_identifier) @bind.name) @bind.type) @bind)))
(method_elem name: (field_identifier) @bind.name) @bind
(function_declaration
  result: [(type_identifier) (pointer_type) (qualified_type) (generic_type) (slice_type)
           (array_type) (map_type)] @bind.type) @returns
(function_declaration result: (parameter_list . (parameter_declaration type: (_) @bind.type))) @returns
(method_declaration
  result: [(type_identifier) (pointer_type) (qualified_type) (generic_type) (slice_type)
           (array_type) (map_type)] @bind.type) @returns
(method_declaration result: (parameter_list . (parameter_declaration type: (_) @bind.type))) @returns

; conversion facts (semgraph.indexer.go_conv): values passed, assigned, keyed into a
; literal or returned, and the parameters typed by another package's type, so that a call on
; a value of an external interface finds the repository's types that reach it
(call_expression function: (_) @conv.slot arguments: (argument_list (_) @conv.arg)) @conv
(assignment_statement
  left: (expression_list . (_) @conv.slot .)
  right: (expression_list . (_) @conv.arg .)) @conv
(var_spec name: (identifier) @conv.slot type: (_) value: (expression_list . (_) @conv.arg .)) @conv
(composite_literal
  type: (_) @conv.lit
  body: (literal_value (keyed_element
    key: (literal_element (identifier) @conv.slot)
    value: (literal_element (_) @conv.arg)))) @conv
(return_statement (expression_list . (_) @conv.ret .)) @conv
(function_declaration parameters: (parameter_list) @conv.params) @conv
(method_declaration parameters: (parameter_list) @conv.params) @conv
; constants of a defined type (const ( Esc EventType = iota; CtrlA )): each spec without a type
; or a value repeats the one before it (semgraph.indexer.typed.go_consts)
(const_spec name: (identifier) @bind.name type: (_) @bind.type) @bind
(const_declaration) @consts
