//! Pajé trace reader: event definitions, the container hierarchy, states,
//! events, links and variables.
