package sim

// routeClouds adds the clouds' APIs and credential services to the mux.
func (s *Server) routeClouds() {
	for _, op := range bedrockOps {
		s.mux.HandleFunc("POST /model/{modelId}/"+op.path, s.bedrockHandler(op))
	}
	s.mux.HandleFunc("POST /v1beta/models/{model}", s.handleGemini)
	s.mux.HandleFunc("POST /v1/models/{model}", s.handleGemini)
	s.mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}", s.handleVertex)
	s.mux.HandleFunc("POST /v1beta1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}", s.handleVertex)
	s.mux.HandleFunc("POST /v1/publishers/{publisher}/models/{model}", s.handleVertexExpress)
	s.mux.HandleFunc("POST /v1beta1/publishers/{publisher}/models/{model}", s.handleVertexExpress)
	for _, p := range azurePaths {
		s.mux.HandleFunc(p.pattern, s.azureHandler(p.api, p.deployment))
	}
	s.mux.HandleFunc("POST /token", s.handleToken)
	s.mux.HandleFunc("GET /computeMetadata/v1/{path...}", s.handleMetadata)
	s.mux.HandleFunc("POST /{$}", s.handleSTS)
	s.mux.HandleFunc("GET /v2/credentials", s.handleContainerCreds)
	s.mux.HandleFunc("GET /v2/credentials/{id...}", s.handleContainerCreds)
}
