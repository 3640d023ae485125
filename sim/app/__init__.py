"""The Streamlit app's pages (app.py only wires them together)."""
