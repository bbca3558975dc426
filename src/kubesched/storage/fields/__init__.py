"""Field ownership for server-side apply: paths and sets (`paths`), values walked by their schema
(`typed`), and the managers of an object's fields (`managers`)."""
