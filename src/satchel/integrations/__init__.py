"""Adapters that put satchel behind other frameworks' own interfaces.

Each module needs its framework (an extra: ``satchel[langgraph]``) and is imported by
name (``satchel.integrations.langgraph``); it sits above the public facade, beside the
servers, and calls only the public API, over a Runtime or a Client alike.
"""
