SELECT current_user AS name
