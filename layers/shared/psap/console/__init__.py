"""The administrators' console in the browser: sign-in links, sessions and their cookie."""
