"""The simulated OpenAI-compatible model: request, plan, pacing, HTTP face."""
