"""The curriculum's labs (`kubesched lab`): the book of all 37, and those kubesched performs,
each narrated with both code sites and ended by a check of its claim."""
