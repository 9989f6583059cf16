// msgpackr loads this in a try/catch and uses its pure-JavaScript path when it throws.
throw new Error('msgpackr native acceleration is disabled in this build');
