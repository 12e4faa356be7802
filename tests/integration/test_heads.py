"""A console with two heads (headless, --size 800x600,640x480): the session
has an output per head, with the console's names and sizes (wayland-info);
each output's picture (grim -o) equals that head's on the console byte for
byte; a window dragged from one head to the other; a video fullscreen on
the second head while the first stays exact; the second head unplugged
mid-session (its windows move to the first); the session carried to a
console with one head and back to one with two."""
import os
import re
import signal
import subprocess

from slimtest import NO_CODEC, BTN_LEFT, KEY_LEFTALT, BACKGROUND, Session, fraction_not, log, \
    require_programs, run, scaled, wait_until

HEADS = '800x600,640x480'
W1 = 800  # the second head starts here on the console's screen


def outputs(s, scales=False):
    """wayland-info's wl_outputs: {name: (width, height)}, or with their scale."""
    r = s.run_client(['wayland-info'], timeout=15)
    if r.returncode != 0:
        s.fail('wayland-info failed: %s' % r.stderr.decode(errors='replace'))
    found = {}
    for block in r.stdout.decode(errors='replace').split("interface: 'wl_output'")[1:]:
        block = block.split('interface:')[0]
        name = re.search(r"^\s+name: '?([A-Za-z0-9._-]+)'?\s*$", block, re.M)
        mode = re.search(r'width: (\d+) px, height: (\d+) px', block)
        scale = re.search(r'scale: (\d+)', block)
        if name and mode and scale:
            found[name.group(1)] = (int(mode.group(1)), int(mode.group(2))) + \
                ((int(scale.group(1)),) if scales else ())
    return found


def wait_for_scale(s, client, scale):
    """The client's last wl_surface.set_buffer_scale (WAYLAND_DEBUG) is `scale`."""
    path = os.path.join(s.outdir, '%s.stderr.log' % client.name)
    want = 'set_buffer_scale(%d)' % scale

    def last_scale():
        with open(path, errors='replace') as f:
            said = [l for l in f if 'set_buffer_scale(' in l and '->' in l]
        return said[-1] if said else ''
    wait_until(last_scale, scaled(20), 'foot to draw at scale %d' % scale,
               holds=lambda line: want in line, fail=s.fail)


def assert_heads_equal(s, names):
    for name in names:
        s.assert_screens_equal(head=name)


def drag(s, start, end, steps=8):
    """Alt + drag from start to end, in steps the console's pointer follows."""
    s.motion(*start)
    s.key(KEY_LEFTALT, True)
    s.button(BTN_LEFT, True)
    for i in range(1, steps + 1):
        x = start[0] + (end[0] - start[0]) * i // steps
        y = start[1] + (end[1] - start[1]) * i // steps
        s.motion(x, y)
        s.wait_stats(lambda st: (st['cursor_x'], st['cursor_y']) == (x, y),
                     'the pointer at %d,%d' % (x, y), timeout=5)
    s.button(BTN_LEFT, False)
    s.key(KEY_LEFTALT, False)


def test():
    require_programs('wayland-info', 'grim', 'mpv', 'ffmpeg', 'foot')
    with Session('heads', size=(800, 600), console=False, console_args=NO_CODEC) as s:
        s.console = s.start_console(extra_args=['--size', HEADS])
        got = outputs(s)
        if got != {'CONSOLE-1': (800, 600), 'CONSOLE-2': (640, 480)}:
            s.fail('wayland-info lists %r, not the console\'s two heads' % got)
        log('outputs: %r' % got)

        # slim-echo opens on the head with the pointer (the primary one)
        s.start_client([s.slim_echo], wait_line='ready')
        s.wait_screen(lambda img: img.getpixel((160, 160)) == (255, 255, 255),
                      'slim-echo on the first head')
        assert_heads_equal(s, ['CONSOLE-1', 'CONSOLE-2'])
        drag(s, (160, 160), (W1 + 300, 200))
        img = s.wait_screen(lambda img: img.getpixel((W1 + 300, 200)) == (255, 255, 255) and
                            img.getpixel((160, 160)) == BACKGROUND,
                            'slim-echo dragged onto the second head')
        assert_heads_equal(s, ['CONSOLE-1', 'CONSOLE-2'])

        # the second head unplugged: its window comes to the first
        mark = s.compositor.stderr.mark()
        s.console.cmd('heads 800x600')
        s.console.wait_for('attached', 15)
        s.wait_screen(lambda img: img.size == (800, 600) and
                      fraction_not(img, BACKGROUND) > 0.05, 'the window on the one head left')
        if not any('moves to CONSOLE-1' in l for l in s.compositor.log_since(mark)):
            s.fail('the compositor did not move the window off the head that went')
        s.assert_screens_equal()
        if set(outputs(s)) != {'CONSOLE-1'}:
            s.fail('CONSOLE-2 is still an output after its head went')

        # both heads again; a video fullscreen on the second, foot on the first exact
        s.console.cmd('heads ' + HEADS)
        s.console.wait_for('attached', 15)
        clip = os.path.join(s.tmp, 'clip.mkv')
        subprocess.run(['ffmpeg', '-v', 'error', '-y', '-f', 'lavfi', '-i',
                        'mandelbrot=size=320x240:rate=30', '-t', '3', '-c:v', 'mpeg4',
                        '-q:v', '2', clip], check=True, timeout=scaled(60))
        s.start_client(['foot', '--', 'sh', '-c', 'echo on the first head; exec sleep 600'])
        s.motion(W1 + 320, 240)
        mpv = s.start_client(['mpv', '--vo=wlshm', '--no-audio', '--loop=inf', '--hwdec=no',
                        '--osd-level=0', '--no-osc', '--no-input-default-bindings',
                        '--really-quiet', '--fs', clip])
        s.wait_stats(lambda st: st['cscs'] > 20, 'the video as CSCS', timeout=30)
        img = s.console_image()
        if img.getpixel((W1 + 320, 240)) == BACKGROUND:
            s.fail('the video does not fill the second head')
        assert_heads_equal(s, ['CONSOLE-1'])

        # carried to a console with one head, and back to one with two (the
        # video stopped: the windows of the head that went stay on the first)
        mpv.send_signal(signal.SIGSTOP)
        s.console.quit()
        s.console = s.start_console(console_id='console-b', size=(800, 600))
        if set(outputs(s)) != {'CONSOLE-1'}:
            s.fail('a one-head console\'s session still has %r' % outputs(s))
        s.assert_screens_equal()
        s.console.quit()
        s.console = s.start_console(console_id='console-c', extra_args=['--size', HEADS])
        if outputs(s) != {'CONSOLE-1': (800, 600), 'CONSOLE-2': (640, 480)}:
            s.fail('back on two heads, wayland-info lists %r' % outputs(s))
        assert_heads_equal(s, ['CONSOLE-1', 'CONSOLE-2'])
        log('carried to one head and back to two')
        mpv.stop()

        # a 27-inch 4K monitor gets scale 2, and clients draw at it; 1080p gets 1
        s.console.quit()
        s.console = s.start_console(console_id='console-d',
                                    extra_args=['--size', '3840x2160/600x340mm'])
        if outputs(s, scales=True) != {'CONSOLE-1': (3840, 2160, 2)}:
            s.fail('a 3840x2160 head of 600x340 mm is %r' % outputs(s, scales=True))
        scaled_foot = s.start_client(['foot', '--', 'sh', '-c', 'exec sleep 600'],
                                     env={'WAYLAND_DEBUG': '1'}, name='foot-debug')
        wait_for_scale(s, scaled_foot, 2)
        s.assert_screens_equal(head='CONSOLE-1')
        s.console.quit()
        s.console = s.start_console(console_id='console-e', size=(1920, 1080))
        if outputs(s, scales=True) != {'CONSOLE-1': (1920, 1080, 1)}:
            s.fail('a 1920x1080 head without a physical size is %r' % outputs(s, scales=True))
        wait_for_scale(s, scaled_foot, 1)
        s.assert_screens_equal()
        log('scale 2 on the 4K head, 1 on the 1080p one; foot drew at each')


run(test)
