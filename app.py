"""innosim in the browser: `streamlit run app.py`. Only wires the pages (sim/app/) together."""

import streamlit as st

from sim.app import calibrate_page, compare, iobench_page, learn, sweep_page, whatif

st.set_page_config(page_title="innosim", layout="wide")
st.navigation([
    st.Page(whatif.render, title="What-if", url_path="whatif", default=True),
    st.Page(compare.render, title="Compare", url_path="compare"),
    st.Page(sweep_page.render, title="Sweep", url_path="sweep"),
    st.Page(calibrate_page.render, title="Calibrate", url_path="calibrate"),
    st.Page(learn.render, title="Learn", url_path="learn"),
    st.Page(iobench_page.render, title="IObench (device and filesystem)", url_path="iobench"),
]).run()
