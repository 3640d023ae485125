"""innosim in the browser: `streamlit run app.py`. Only wires the pages (sim/app/) together."""

import streamlit as st

from sim.app import iobench_page, whatif

st.set_page_config(page_title="innosim", layout="wide")
st.navigation([
    st.Page(whatif.render, title="What-if", url_path="whatif", default=True),
    st.Page(iobench_page.render, title="IObench (device and filesystem)", url_path="iobench"),
]).run()
