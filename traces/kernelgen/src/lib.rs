//! Writes synthetic CTF 1.8 kernel traces in LTTng's layout.
