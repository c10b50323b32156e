package mcpserver

// addReferenceTools adds the reference filesystem server's tools (not yet
// built).
func (srv *Server) addReferenceTools() {}
