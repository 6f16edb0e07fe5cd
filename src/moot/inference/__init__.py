"""Talking to models: the protocol every backend speaks, llama.cpp, servers, scripted models."""
