; semgraph extraction query for Rust.
; Captures: @definition.<kind> + @name; @scope.impl + @name (methods' parent type);
; @scope.namespace + @name (inline modules); @import; @call + @callee (+ @receiver).

(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(impl_item type: [(type_identifier) @name
                  (generic_type type: (type_identifier) @name)
                  (scoped_type_identifier name: (type_identifier) @name)]) @scope.impl
(mod_item name: (identifier) @name body: (declaration_list)) @scope.namespace

(use_declaration) @import

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (field_expression value: (_) @receiver field: (field_identifier) @callee)) @call
(call_expression
  function: (scoped_identifier path: (_) @receiver name: (identifier) @callee)) @call
(call_expression
  function: (generic_function
    function: (scoped_identifier path: (_) @receiver name: (identifier) @callee))) @call

; typed names (indexer/typed.py): `let` bindings, parameters, struct fields, returns
(let_declaration pattern: (identifier) @bind.name type: (_) @bind.type) @bind
(let_declaration pattern: (identifier) @bind.name value: (call_expression function: (_) @bind.call)) @bind
(let_declaration pattern: (identifier) @bind.name
  value: (try_expression (call_expression function: (_) @bind.call))) @bind
(let_declaration pattern: (identifier) @bind.name
  value: (struct_expression name: (_) @bind.call)) @bind
(let_declaration pattern: (identifier) @bind.name) @bind
(let_declaration pattern: (mut_pattern (identifier) @bind.name) type: (_) @bind.type) @bind
(let_declaration pattern: (mut_pattern (identifier) @bind.name)
  value: (call_expression function: (_) @bind.call)) @bind
(let_declaration pattern: (mut_pattern (identifier) @bind.name)) @bind
(parameter pattern: (identifier) @bind.name type: (_) @bind.type) @bind
(field_declaration name: (field_identifier) @bind.name type: (_) @bind.type) @bind
(function_item return_type: (_) @bind.type) @returns
