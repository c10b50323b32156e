package gojq

// ModuleLoader is the interface for loading modules.
//
// Implement following optional methods. (fsbox has no filesystem loader.)
//
//	LoadInitModules() ([]*Query, error)
//	LoadModule(string) (*Query, error)
//	LoadModuleWithMeta(string, map[string]any) (*Query, error)
//	LoadJSON(string) (any, error)
//	LoadJSONWithMeta(string, map[string]any) (any, error)
type ModuleLoader any

// fsbox keeps the type only: gojq's filesystem loader (NewModuleLoader)
// is removed, so no query reads a file outside the sandbox.
