// Intentionally empty: the header declares what libFuzzer defines.
