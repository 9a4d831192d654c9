"""A scripted upstream (a real HTTP server answering from a script) and a local stack of it with
a gateway, for the tests, the demo and the benchmark."""
